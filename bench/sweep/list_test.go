package sweep

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseList(t *testing.T) {
	cases := map[string][]float64{
		"1,2,4,8":      {1, 2, 4, 8},
		" 0.5 , 3 ":    {0.5, 3},
		"1:64:x2":      {1, 2, 4, 8, 16, 32, 64},
		"1:50:x2":      {1, 2, 4, 8, 16, 32},
		"10:100:+10":   {10, 20, 30, 40, 50, 60, 70, 80, 90, 100},
		"0.1:0.3:+0.1": {0.1, 0.2, 0.3},
		"5:5:+1":       {5},
	}
	for in, want := range cases {
		got, err := ParseList("sweep-rate", in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0,1", "a", "1:10", "10:1:+1", "1:10:x1", "1:10:-1", "1:1e9:+1", "1:2:x"} {
		if _, err := ParseList("sweep-rate", in); err == nil || !strings.Contains(err.Error(), "--sweep-rate") {
			t.Errorf("%q: %v", in, err)
		}
	}
}
