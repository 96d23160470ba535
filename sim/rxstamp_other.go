//go:build !linux

package sim

import "net"

// stampListen is ln: receive times are read on Linux only, elsewhere a
// request's TTFT counts from when the simulator read it.
func stampListen(ln net.Listener) net.Listener { return ln }
