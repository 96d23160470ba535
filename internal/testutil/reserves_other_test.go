//go:build !linux

package testutil

const reserves = false
