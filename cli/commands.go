package cli

import "github.com/spf13/cobra"

// extraCommands are added by the files that define them (results,
// compare, doctor), so each command lives beside its own code.
var extraCommands []func() *cobra.Command

// AddCommands adds every registered command to root.
func AddCommands(root *cobra.Command) {
	for _, f := range extraCommands {
		root.AddCommand(f())
	}
}
