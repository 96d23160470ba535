package sim

import (
	"context"
	"net"
	"time"
)

// arrivalConn is a connection that knows when the kernel received the
// current request's first bytes (rxstamp_linux.go).
type arrivalConn interface{ requestArrival() time.Time }

type arrivalKey struct{}

// withConn is the http.Server's ConnContext: it puts a stamping
// connection in its requests' context.
func withConn(ctx context.Context, c net.Conn) context.Context {
	if ac, ok := c.(arrivalConn); ok {
		return context.WithValue(ctx, arrivalKey{}, ac)
	}
	return ctx
}

// maxStampAge is how far before now a receive time may be and still be
// the request's: older, it is not taken (a clock step, or a stamp left
// from another request).
const maxStampAge = 10 * time.Second

// kernelArrival is when the kernel received ctx's request, if its
// connection knows and the time is plausible against now.
func kernelArrival(ctx context.Context, now time.Time) (time.Time, bool) {
	ac, ok := ctx.Value(arrivalKey{}).(arrivalConn)
	if !ok {
		return time.Time{}, false
	}
	at := ac.requestArrival()
	if at.IsZero() || at.After(now) || now.Sub(at) > maxStampAge {
		return time.Time{}, false
	}
	return at, true
}
