package runs

import "fmt"

func ExampleFilter_String() {
	for _, f := range Filters {
		fmt.Print(f, " ")
	}
	// Output: all failed cold reused unverified
}
