// Package errs holds the error helpers kvbench's packages share.
package errs

import "errors"

// Root is the innermost error of a chain of wrapped errors: for a failed
// HTTP call the cause ("connection refused") without the url.Error and
// net.OpError layers that repeat the URL and the operation. It is nil for
// nil.
func Root(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}
