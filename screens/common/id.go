package common

import "sync/atomic"

// ID names the screen a result is for. A screen takes one when it is
// built (NewID) and tags the commands it starts with it; the root hands
// every result to every screen on the stack, so the owner gets it even
// under a dialog, and the others see an ID that is not theirs.
type ID uint64

var lastID atomic.Uint64

// NewID returns an ID no other screen has.
func NewID() ID { return ID(lastID.Add(1)) }
