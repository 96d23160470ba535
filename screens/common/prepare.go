package common

import (
	"context"
	"sync"
)

// Owner is a screen that asks for work in its own name (by its ID): the
// root gives up what it asked for when it leaves the stack.
type Owner interface {
	ID() ID
}

// Preparations are the runs being prepared off the update loop, each
// for the screen that asked. A prepared run always has an owner: the
// screen that takes it, or the root, which cancels a preparation whose
// screen left the stack (Back while preparing) and discards a runner
// that arrives for no one.
type Preparations struct {
	mu     sync.Mutex
	cancel map[ID]context.CancelFunc
}

// Start registers a preparation for owner and returns its context,
// cancelled when the owner leaves (or by Done).
func (p *Preparations) Start(parent context.Context, owner ID) context.Context {
	if p == nil {
		return parent
	}
	ctx, cancel := context.WithCancel(parent)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cancel == nil {
		p.cancel = map[ID]context.CancelFunc{}
	}
	if old := p.cancel[owner]; old != nil {
		old()
	}
	p.cancel[owner] = cancel
	return ctx
}

// Done forgets owner's preparation (its answer arrived).
func (p *Preparations) Done(owner ID) { p.stop(owner, false) }

// Cancel stops owner's preparation, if one is in flight.
func (p *Preparations) Cancel(owner ID) { p.stop(owner, true) }

func (p *Preparations) stop(owner ID, cancel bool) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := p.cancel[owner]; c != nil {
		if cancel {
			c()
		}
		delete(p.cancel, owner)
	}
}

// CancelAll stops every preparation (the program is ending).
func (p *Preparations) CancelAll() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, c := range p.cancel {
		c()
		delete(p.cancel, id)
	}
}
