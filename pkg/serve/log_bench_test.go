package serve

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/seed-a052040e/agentiso/internal/console"
)

// BenchmarkLogRequest is the request log line of a 1 MiB range GET, as
// agentiso serve writes it (the console handler; here to io.Discard):
// its time and allocations per request.
func BenchmarkLogRequest(b *testing.B) {
	s := &Server{log: slog.New(console.NewHandler(io.Discard, slog.LevelInfo, false)), lim: DefaultLimits}
	r := httptest.NewRequest("GET", "/agent.x86_64.iso", nil)
	r.RemoteAddr = "127.0.0.1:54321"
	r.Header.Set("Range", "bytes=123456789-124505364")
	rw := &recorder{status: 206, n: 1 << 20}
	b.ReportAllocs()
	for b.Loop() {
		s.logRequest(r, rw, 1400*time.Microsecond)
	}
}
