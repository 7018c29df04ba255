package rendezvous

import (
	"sync"
	"time"
)

// Clock is the time source of the wait loop; tests inject a fake one.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// RealClock is the wall clock.
type RealClock struct{}

// Now is time.Now.
func (RealClock) Now() time.Time { return time.Now() }

// After is time.After.
func (RealClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// ScaledClock runs Scale times faster than the wall clock: Now advances
// Scale seconds per real second and After(d) fires after d/Scale. It lets a
// simulated hour-long install run in a minute. Scale <= 1 behaves like RealClock.
type ScaledClock struct {
	Scale float64
	once  sync.Once
	start time.Time
}

func (c *ScaledClock) init() { c.once.Do(func() { c.start = time.Now() }) }

// Now returns the scaled time.
func (c *ScaledClock) Now() time.Time {
	c.init()
	if c.Scale <= 1 {
		return time.Now()
	}
	el := time.Since(c.start)
	return c.start.Add(time.Duration(float64(el) * c.Scale))
}

// After fires after d scaled down.
func (c *ScaledClock) After(d time.Duration) <-chan time.Time {
	c.init()
	if c.Scale <= 1 {
		return time.After(d)
	}
	ch := make(chan time.Time, 1)
	time.AfterFunc(time.Duration(float64(d)/c.Scale), func() { ch <- c.Now() })
	return ch
}
