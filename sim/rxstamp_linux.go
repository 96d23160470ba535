package sim

import (
	"io"
	"net"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// In measuring mode (--fixed-ttft, --fixed-itl) a request's TTFT is
// counted from when the kernel received its first bytes (SO_TIMESTAMPNS),
// not from when the simulator got round to reading and parsing them: with
// 1000 requests arriving at once on one core, the server's own intake
// (its goroutines woken, headers parsed) ran 4-8 ms behind at the median,
// and every first token came that much late (docs/client-performance.md
// "Streams at once").

// stampListen is ln, its connections stamped.
func stampListen(ln net.Listener) net.Listener { return stampListener{ln} }

// stampListener accepts connections that note the kernel's receive time
// of each request's first bytes; a connection the socket option cannot
// be set on is served as it is.
type stampListener struct{ net.Listener }

func (l stampListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return c, err
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c, nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return c, nil
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return c, nil
	}
	sc := &stampConn{TCPConn: tc, rc: rc}
	sc.armed.Store(true)
	return sc, nil
}

// stampConn reads with recvmsg to see each read's receive time. The
// first read after the connection's last write (or its first read) is a
// new request's first bytes: its time is kept until the next. Linux turns
// timestamps on for the machine a little after the first socket asks (a
// deferred static key), so the first requests after the simulator starts
// may carry none: they count from their handler, as before.
type stampConn struct {
	*net.TCPConn
	rc  syscall.RawConn
	oob [128]byte // the read's control messages; used by one Read at a time

	// Written by the server's reads and the handler's writes, on two
	// goroutines: atomics, as every chunk of a stream is a write.
	armed atomic.Bool  // the next read starts a request
	at    atomic.Int64 // its receive time, Unix nanoseconds; 0: none
}

func (c *stampConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n, oobn int
	var rerr error
	err := c.rc.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = syscall.Recvmsg(int(fd), p, c.oob[:], 0)
		return rerr != syscall.EAGAIN && rerr != syscall.EINTR
	})
	if err == nil && rerr != nil {
		err = &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: rerr}
	}
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, io.EOF
	}
	if c.armed.CompareAndSwap(true, false) {
		c.at.Store(rxTime(c.oob[:oobn]))
	}
	return n, nil
}

func (c *stampConn) Write(p []byte) (int, error) {
	c.armed.Store(true)
	return c.TCPConn.Write(p)
}

// requestArrival is the receive time of the current request's first
// bytes; zero when the kernel gave none.
func (c *stampConn) requestArrival() time.Time {
	if ns := c.at.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}

// rxTime is the SCM_TIMESTAMPNS time in a read's control messages, in
// Unix nanoseconds; 0 without one.
func rxTime(oob []byte) int64 {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return 0
	}
	for _, m := range msgs {
		if m.Header.Level == syscall.SOL_SOCKET && m.Header.Type == syscall.SCM_TIMESTAMPNS &&
			len(m.Data) >= int(unsafe.Sizeof(syscall.Timespec{})) {
			var ts syscall.Timespec
			copy(unsafe.Slice((*byte)(unsafe.Pointer(&ts)), unsafe.Sizeof(ts)), m.Data)
			return ts.Nano()
		}
	}
	return 0
}
