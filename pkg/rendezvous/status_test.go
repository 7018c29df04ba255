package rendezvous

import (
	"errors"
	"testing"

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
