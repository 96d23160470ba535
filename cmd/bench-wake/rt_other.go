//go:build !linux

package main

// realTime does nothing outside Linux.
func realTime() {}
