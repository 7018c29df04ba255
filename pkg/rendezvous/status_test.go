package rendezvous

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestStatusBeforeWait(t *testing.T) {
	s := StatusBeforeWait("install-complete", ExitUsage, errors.New("read d/rendezvousIP: no such file"))
	assert.Equal(t, Status{Target: "install-complete", Result: ResultFailed, ExitCode: 1, Error: "read d/rendezvousIP: no such file"}, s)

	s = StatusBeforeWait("", ExitInterrupted, errors.New("interrupted"))
	assert.Equal(t, ResultInterrupted, s.Result)
	assert.Equal(t, 130, s.ExitCode)
	assert.Empty(t, s.Target)
}

func TestExitCodeAndCheckTiming(t *testing.T) {
	assert.Equal(t, 0, ExitCode(nil))
	assert.Equal(t, ExitUsage, ExitCode(errors.New("read d/rendezvousIP")))
	assert.Equal(t, ExitInterrupted, ExitCode(ErrInterrupted))
	assert.NoError(t, CheckTiming(0, 1))
	assert.EqualError(t, CheckTiming(-time.Second, 1), "--timeout must be positive and --time-scale greater than zero")
	assert.Error(t, CheckTiming(time.Minute, 0))
}
