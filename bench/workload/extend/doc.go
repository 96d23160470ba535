// Package extend holds the test that adds a workload from outside the
// built-in ones: its settings rows, typed options, plan and streams
// registered from one file, then run, swept, shown in the form and
// reproduced like any other.
package extend
