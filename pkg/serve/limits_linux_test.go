package serve

import (
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAcceptedConnectionsGetTheSendBuffer: each accepted connection's
// kernel send buffer is Limits.SendBuffer, as the kernel applies it
// (capped at net.core.wmem_max, then doubled), the default 1 MiB
// (docs/serve-boot.md's limits table).
func TestAcceptedConnectionsGetTheSendBuffer(t *testing.T) {
	require.Equal(t, 1<<20, DefaultLimits.SendBuffer, "docs/serve-boot.md gives the default")
	b, err := os.ReadFile("/proc/sys/net/core/wmem_max")
	require.NoError(t, err)
	wmax, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	for _, set := range []int{0, 64 << 10} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		l := newConnLimiter(ln, Limits{SendBuffer: set}.withDefaults(), slog.New(slog.NewTextHandler(io.Discard, nil)))
		dialed := make(chan net.Conn, 1)
		go func() {
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				close(dialed)
				return
			}
			dialed <- c
		}()
		c, err := l.Accept()
		require.NoError(t, err)
		if dc, ok := <-dialed; ok {
			defer dc.Close()
		}
		pc, ok := c.(*progressConn)
		require.True(t, ok, "accepted a %T", c)
		tc, ok := pc.Conn.(*net.TCPConn)
		require.True(t, ok, "accepted a %T", pc.Conn)
		raw, err := tc.SyscallConn()
		require.NoError(t, err)
		var got int
		var gerr error
		require.NoError(t, raw.Control(func(fd uintptr) {
			got, gerr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF)
		}))
		require.NoError(t, gerr)
		want := set
		if want == 0 {
			want = DefaultLimits.SendBuffer
		}
		assert.Equal(t, 2*min(want, wmax), got, "SendBuffer %d, net.core.wmem_max %d", set, wmax)
		c.Close()
		ln.Close()
	}
}
