package cli

import "github.com/spf13/cobra"

// extraCommands are added by the files that define them (results,
// compare, doctor), so each command lives beside its own code.
var extraCommands []func() *cobra.Command

// decorators adjust the finished command tree (help layout,
// completions); each is registered by the file that owns it.
var decorators []func(root *cobra.Command)

// AddCommands adds every registered command to root, then applies the
// decorators.
func AddCommands(root *cobra.Command) {
	for _, f := range extraCommands {
		root.AddCommand(f())
	}
	for _, d := range decorators {
		d(root)
	}
}
