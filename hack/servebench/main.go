// Command servebench measures `agentiso serve` against Debian's nginx
// serving the same file from the same directory over loopback (issue 39,
// docs/serve-boot.md "Speed against nginx"): whole-file GETs and random
// 1 MiB range GETs, 1, 10 and 50 concurrent clients, over HTTP and HTTPS
// with the same certificate. For every row the two servers' trials are
// interleaved (agentiso then nginx, then nginx then agentiso, ...) and
// repeated, so that the load other processes put on the machine falls on
// both alike; it prints a Markdown table of the throughputs, their ratio,
// the p99 latency of a range GET and agentiso's peak RSS, with the load
// average.
//
//	go run ./hack/servebench -agentiso bin/agentiso -nginx /usr/sbin/nginx -work DIR
//
// hack/bench-serve.sh (part of make bench) installs nginx and runs it.
//
// The load generator is this Go program rather than wrk (Debian's) because
// it checks every answer (status, Content-Length, Content-Range and the
// first bytes of the body against the file: a server answering fast and
// wrong would otherwise win), it keeps the latency of every range GET for an
// exact p99, it drives both servers and samples agentiso's peak RSS
// (VmHWM, reset before each trial) in one process, and it reads with
// 256 KiB buffers, so that the client takes less of the two cores than
// wrk's 8 KiB reads would.
package main

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/seed-a052040e/agentiso/pkg/serve"
)

// isoName is the served file: a name agentiso serve serves.
const isoName = "agent.x86_64.iso"

// rangeSize is the length of a range GET.
const rangeSize = 1 << 20

// sector aligns the ranges' starts, as a BMC reading an ISO does.
const sector = 2048

// verifyLen is how many leading bytes of every body are compared with the
// file.
const verifyLen = 64

// readBuf is the client's read size.
const readBuf = 256 << 10

type config struct {
	agentiso, nginx, work string
	size                  int64
	duration              time.Duration
	repeat                int
	clients               []int
	protos, modes         []string
	out                   string
}

func main() {
	var c config
	var clients, protos, modes string
	flag.StringVar(&c.agentiso, "agentiso", "bin/agentiso", "the agentiso binary")
	flag.StringVar(&c.nginx, "nginx", "/usr/sbin/nginx", "the nginx binary")
	flag.StringVar(&c.work, "work", "", "an empty work directory (the file, the certificate, the servers' logs)")
	flag.Int64Var(&c.size, "size", 1<<30, "the served file's size in bytes")
	flag.DurationVar(&c.duration, "duration", 5*time.Second, "one trial's length")
	flag.IntVar(&c.repeat, "repeat", 3, "trials per server and row")
	flag.StringVar(&clients, "clients", "1,10,50", "concurrent clients, comma-separated")
	flag.StringVar(&protos, "protos", "http,https", "protocols, comma-separated")
	flag.StringVar(&modes, "modes", "whole,range", "GETs: whole (the whole file) and/or range (random 1 MiB ranges)")
	flag.StringVar(&c.out, "out", "", "also write the table to this file")
	flag.Parse()
	var err error
	if c.clients, err = parseInts(clients); err != nil {
		fatal(fmt.Errorf("-clients: %w", err))
	}
	c.protos, c.modes = strings.Split(protos, ","), strings.Split(modes, ",")
	for _, m := range c.modes {
		if m != "whole" && m != "range" {
			fatal(fmt.Errorf("-modes: %q is neither whole nor range", m))
		}
	}
	for _, p := range c.protos {
		if p != "http" && p != "https" {
			fatal(fmt.Errorf("-protos: %q is neither http nor https", p))
		}
	}
	if c.work == "" || c.repeat < 1 || c.size < 2*rangeSize {
		fatal(errors.New("give -work, -repeat >= 1 and -size >= 2 MiB"))
	}
	if err := run(c); err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "servebench:", err)
	os.Exit(1)
}

func parseInts(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func logf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "servebench: "+format+"\n", a...)
}

// server is one server under test: a process and its base URLs.
type server struct {
	name string
	cmd  *exec.Cmd
	base map[string]string
	// pid is the server's process: its peak RSS is read when rss is set;
	// its CPU time and that of its children (nginx's workers) are
	// counted.
	pid int
	rss bool
}

func run(c config) error {
	dir := filepath.Join(c.work, "dir")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	logf("writing the %d MiB file %s and its .sha256", c.size>>20, filepath.Join(dir, isoName))
	if err := writeFile(filepath.Join(dir, isoName), c.size); err != nil {
		return err
	}
	crt, key := filepath.Join(c.work, "serve.crt"), filepath.Join(c.work, "serve.key")
	pool, err := writeCert(crt, key)
	if err != nil {
		return err
	}
	ports, err := freePorts(4)
	if err != nil {
		return err
	}
	var servers []*server
	defer func() {
		for _, s := range servers {
			s.stop()
		}
	}()
	for i, proto := range c.protos {
		var tlsArgs []string
		if proto == "https" {
			tlsArgs = []string{"--tls-cert", crt, "--tls-key", key}
		}
		s, err := startAgentiso(c.agentiso, dir, c.work, proto, ports[i], tlsArgs)
		if s != nil {
			servers = append(servers, s)
		}
		if err != nil {
			return err
		}
	}
	ng, err := startNginx(c.nginx, dir, c.work, crt, key, ports[2], ports[3], c.protos)
	if ng != nil {
		servers = append(servers, ng)
	}
	if err != nil {
		return err
	}
	file, err := os.Open(filepath.Join(dir, isoName))
	if err != nil {
		return err
	}
	defer file.Close()
	for _, s := range servers {
		if err := s.ready(pool, 90*time.Second); err != nil {
			return err
		}
	}
	ag := map[string]*server{}
	for _, s := range servers[:len(servers)-1] {
		for p := range s.base {
			ag[p] = s
		}
	}
	env := environment(c, c.nginx)
	logf("%s", env)
	logf("warming up")
	for _, proto := range c.protos {
		for _, s := range []*server{ag[proto], ng} {
			for _, m := range c.modes {
				if r := trial(s.base[proto], m, 10, time.Second, pool, file, c.size, 0); r.errs > 0 {
					return fmt.Errorf("%s %s %s GETs: %d wrong answers, the first: %v", s.name, proto, m, r.errs, r.firstErr)
				}
			}
		}
	}
	var rows []row
	for _, proto := range c.protos {
		for _, m := range c.modes {
			for _, n := range c.clients {
				r := row{proto: proto, mode: m, clients: n, loadBefore: loadavg()}
				for rep := range c.repeat {
					order := []*server{ag[proto], ng}
					if rep%2 == 1 {
						order = []*server{ng, ag[proto]}
					}
					var pair [2]result
					for _, s := range order {
						if s.rss {
							resetPeak(s.pid)
						}
						cpu0, self0 := cpuTime(s.pid), ownCPUTime()
						res := trial(s.base[proto], m, n, c.duration, pool, file, c.size, uint64(rep+1))
						res.cpu, res.clientCPU = cpuTime(s.pid)-cpu0, ownCPUTime()-self0
						if s.rss {
							res.peakRSS = peakRSS(s.pid)
						}
						i := 1
						if s != ng {
							i = 0
						}
						pair[i] = res
						logf("%s %s %s GETs, %d clients, trial %d: %.0f MiB/s, %d GETs, p99 %s, CPU %.2f s/GiB, peak RSS %d MiB, errors %d",
							s.name, proto, m, n, rep+1, res.mibps(), res.reqs, res.p99().Round(10*time.Microsecond), res.cpuPerGiB(), res.peakRSS>>20, res.errs)
						// Let the server close the trial's connections
						// before the next one opens its own.
						time.Sleep(300 * time.Millisecond)
					}
					r.ag = append(r.ag, pair[0])
					r.ng = append(r.ng, pair[1])
				}
				r.loadAfter = loadavg()
				rows = append(rows, r)
			}
		}
	}
	table := env + "\n\n" + render(rows)
	fmt.Println(table)
	if c.out != "" {
		return os.WriteFile(c.out, []byte(table+"\n"), 0o644)
	}
	return nil
}

// writeFile writes size pseudo-random bytes (a fixed seed) to p and their
// sha256 to p.sha256, as agentiso writes beside its outputs.
func writeFile(p string, size int64) error {
	f, err := os.OpenFile(p, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	h := sha256.New()
	rng := rand.NewChaCha8([32]byte{'s', 'e', 'r', 'v', 'e'})
	if _, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(rng, size)); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.WriteFile(p+".sha256", []byte(hex.EncodeToString(h.Sum(nil))+"  "+filepath.Base(p)+"\n"), 0o644)
}

// writeCert writes a certificate for 127.0.0.1 and its key, for both
// servers, and returns a pool that trusts it.
func writeCert(crt, key string) (*x509.CertPool, error) {
	ss, err := serve.GenerateCert([]string{"127.0.0.1"}, 24*time.Hour)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(ss.Cert.PrivateKey)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(crt, ss.PEM, 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ss.PEM)
	return pool, nil
}

func freePorts(n int) ([]int, error) {
	var out []int
	var lns []net.Listener
	defer func() {
		for _, l := range lns {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

func startAgentiso(bin, dir, work, proto string, port int, tlsArgs []string) (*server, error) {
	logPath := filepath.Join(work, "agentiso-"+proto+".log")
	lf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer lf.Close()
	args := append([]string{"serve", "--dir", dir, "--listen", "127.0.0.1:" + strconv.Itoa(port)}, tlsArgs...)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = lf, lf
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	return &server{name: "agentiso", cmd: cmd, pid: cmd.Process.Pid, rss: true, base: map[string]string{proto: fmt.Sprintf("%s://127.0.0.1:%d/%s", proto, port, isoName)}}, nil
}

// nginxConf is Debian's /etc/nginx/nginx.conf with its paths in the work
// directory, one server on two ports serving dir, and TLS 1.3's suites in
// Go's order (AES-128-GCM first; OpenSSL's own puts AES-256-GCM first):
// both servers then encrypt alike.
func nginxConf(work, dir, crt, key string, httpPort, httpsPort int, root bool) string {
	user := ""
	if root {
		user = "user root;\n"
	}
	tmp := filepath.Join(work, "nginx-tmp")
	return user + `daemon off;
worker_processes auto;
pid ` + filepath.Join(work, "nginx.pid") + `;
error_log ` + filepath.Join(work, "nginx-error.log") + `;
events {
	worker_connections 768;
}
http {
	sendfile on;
	tcp_nopush on;
	types_hash_max_size 2048;
	types { application/x-iso9660-image iso; }
	default_type application/octet-stream;
	ssl_protocols TLSv1.2 TLSv1.3;
	ssl_prefer_server_ciphers on;
	ssl_conf_command Ciphersuites TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256;
	access_log ` + filepath.Join(work, "nginx-access.log") + `;
	gzip on;
	client_body_temp_path ` + tmp + `/body;
	proxy_temp_path ` + tmp + `/proxy;
	fastcgi_temp_path ` + tmp + `/fastcgi;
	uwsgi_temp_path ` + tmp + `/uwsgi;
	scgi_temp_path ` + tmp + `/scgi;
	server {
		listen 127.0.0.1:` + strconv.Itoa(httpPort) + `;
		listen 127.0.0.1:` + strconv.Itoa(httpsPort) + ` ssl;
		ssl_certificate ` + crt + `;
		ssl_certificate_key ` + key + `;
		root ` + dir + `;
	}
}
`
}

func startNginx(bin, dir, work, crt, key string, httpPort, httpsPort int, protos []string) (*server, error) {
	conf := filepath.Join(work, "nginx.conf")
	if err := os.MkdirAll(filepath.Join(work, "nginx-tmp"), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(conf, []byte(nginxConf(work, dir, crt, key, httpPort, httpsPort, os.Geteuid() == 0)), 0o644); err != nil {
		return nil, err
	}
	lf, err := os.Create(filepath.Join(work, "nginx-stderr.log"))
	if err != nil {
		return nil, err
	}
	defer lf.Close()
	cmd := exec.Command(bin, "-p", work, "-c", conf, "-e", filepath.Join(work, "nginx-error.log"))
	cmd.Stdout, cmd.Stderr = lf, lf
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	s := &server{name: "nginx", cmd: cmd, pid: cmd.Process.Pid, base: map[string]string{}}
	for _, p := range protos {
		port := httpPort
		if p == "https" {
			port = httpsPort
		}
		s.base[p] = fmt.Sprintf("%s://127.0.0.1:%d/%s", p, port, isoName)
	}
	return s, nil
}

// ready waits until every base URL answers a HEAD (agentiso hashes the
// file first).
func (s *server) ready(pool *x509.CertPool, timeout time.Duration) error {
	end := time.Now().Add(timeout)
	exited := make(chan struct{})
	go func() {
		for s.cmd.ProcessState == nil && time.Now().Before(end) {
			time.Sleep(100 * time.Millisecond)
		}
		close(exited)
	}()
	for _, u := range s.base {
		cl := &http.Client{Transport: transport(pool, 1), Timeout: 2 * time.Second}
		for {
			resp, err := cl.Head(u)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
				err = errors.New(resp.Status)
			}
			if time.Now().After(end) {
				return fmt.Errorf("%s does not answer at %s after %s: %v (its log is in the work directory)", s.name, u, timeout, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
		cl.CloseIdleConnections()
	}
	return nil
}

func (s *server) stop() {
	if s.cmd.Process == nil {
		return
	}
	sig := syscall.SIGTERM
	_ = s.cmd.Process.Signal(sig)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

func transport(pool *x509.CertPool, clients int) *http.Transport {
	return &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool},
		// HTTP/1.1 on both (a BMC's protocol): no HTTP/2.
		TLSNextProto:        map[string]func(string, *tls.Conn) http.RoundTripper{},
		MaxConnsPerHost:     clients,
		MaxIdleConnsPerHost: clients,
		DisableCompression:  true,
		ReadBufferSize:      readBuf,
	}
}

// result is one trial of one server.
type result struct {
	bytes    int64
	dur      time.Duration
	reqs     int
	lat      []time.Duration
	errs     int
	firstErr error
	cipher   string
	peakRSS  int64
	// cpu is the server's CPU time (user and system) during the trial.
	cpu time.Duration
	// clientCPU is this load generator's.
	clientCPU time.Duration
}

// cpuPerGiB is the server's CPU seconds per GiB sent.
func (r result) cpuPerGiB() float64 { return perGiB(r.cpu, r.bytes) }

// clientPerGiB is the load generator's CPU seconds per GiB received.
func (r result) clientPerGiB() float64 { return perGiB(r.clientCPU, r.bytes) }

func perGiB(d time.Duration, bytes int64) float64 {
	if bytes == 0 {
		return 0
	}
	return d.Seconds() / (float64(bytes) / float64(1<<30))
}

func (r result) mibps() float64 {
	if r.dur <= 0 {
		return 0
	}
	return float64(r.bytes) / float64(1<<20) / r.dur.Seconds()
}

func (r result) p99() time.Duration { return percentile(r.lat, 0.99) }

// percentile is the q-quantile of d (nearest rank), 0 for none.
func percentile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.999999) - 1
	return s[max(0, min(i, len(s)-1))]
}

// trial runs clients concurrent clients GETting u for d: the whole file
// (mode whole) or random 1 MiB ranges (the same sequence for a given seed
// whichever the server), and counts the bytes received in d, partial
// transfers included.
func trial(u, mode string, clients int, d time.Duration, pool *x509.CertPool, file *os.File, size int64, seed uint64) result {
	tr := transport(pool, clients)
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	results := make([]result, clients)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range clients {
		wg.Go(func() {
			results[i] = client(ctx, cl, u, mode, file, size, rand.New(rand.NewPCG(seed, uint64(i))))
		})
	}
	wg.Wait()
	total := result{dur: time.Since(start)}
	for _, r := range results {
		total.bytes += r.bytes
		total.reqs += r.reqs
		total.lat = append(total.lat, r.lat...)
		total.errs += r.errs
		if total.firstErr == nil {
			total.firstErr = r.firstErr
		}
		if total.cipher == "" {
			total.cipher = r.cipher
		}
	}
	return total
}

// client GETs u until ctx ends, checking every answer.
func client(ctx context.Context, cl *http.Client, u, mode string, file *os.File, size int64, rng *rand.Rand) result {
	var r result
	buf := make([]byte, readBuf)
	fail := func(err error) {
		r.errs++
		if r.firstErr == nil {
			r.firstErr = err
		}
	}
	for ctx.Err() == nil {
		off, length := int64(0), size
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			fail(err)
			return r
		}
		if mode == "range" {
			off, length = rng.Int64N((size-rangeSize)/sector)*sector, rangeSize
			req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", off, off+length-1))
		}
		t0 := time.Now()
		resp, err := cl.Do(req)
		if err != nil {
			if ctx.Err() == nil {
				fail(err)
			}
			continue
		}
		if resp.TLS != nil && r.cipher == "" {
			r.cipher = tls.CipherSuiteName(resp.TLS.CipherSuite)
		}
		if err := checkAnswer(resp, mode, off, length, size); err != nil {
			resp.Body.Close()
			fail(err)
			continue
		}
		n, err := readBody(resp.Body, buf, file, off)
		resp.Body.Close()
		r.bytes += n
		switch {
		case err != nil && ctx.Err() != nil:
		case err != nil:
			fail(err)
		case n != length:
			fail(fmt.Errorf("%d bytes of %d", n, length))
		default:
			r.reqs++
			if mode == "range" {
				r.lat = append(r.lat, time.Since(t0))
			}
		}
	}
	return r
}

// checkAnswer checks the status and length of a GET of length bytes at
// off of a file of size (a range GET when mode is range).
func checkAnswer(resp *http.Response, mode string, off, length, size int64) error {
	want := http.StatusOK
	if mode == "range" {
		want = http.StatusPartialContent
		if cr, exp := resp.Header.Get("Content-Range"), fmt.Sprintf("bytes %d-%d/%d", off, off+length-1, size); cr != exp {
			return fmt.Errorf("Content-Range %q, want %q", cr, exp)
		}
	}
	if resp.StatusCode != want {
		return fmt.Errorf("status %s, want %d", resp.Status, want)
	}
	if resp.ContentLength != length {
		return fmt.Errorf("Content-Length %d, want %d", resp.ContentLength, length)
	}
	return nil
}

// readBody reads a body to its end, comparing its first bytes with the
// file's at off, and returns how many bytes it read.
func readBody(body io.Reader, buf []byte, file *os.File, off int64) (int64, error) {
	want := make([]byte, verifyLen)
	if _, err := file.ReadAt(want, off); err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	got := buf[:verifyLen]
	n, err := io.ReadFull(body, got)
	total := int64(n)
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("body of %d bytes", n)
		}
		return total, err
	}
	if string(got) != string(want) {
		return total, fmt.Errorf("the body at %d is not the file's bytes", off)
	}
	for {
		n, err := body.Read(buf)
		total += int64(n)
		if errors.Is(err, io.EOF) {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// resetPeak resets the peak RSS (VmHWM) of pid to its current RSS.
func resetPeak(pid int) {
	if pid > 0 {
		_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
	}
}

// peakRSS is the peak RSS (VmHWM) of pid in bytes, 0 when unknown.
func peakRSS(pid int) int64 {
	if pid <= 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	return parseVmHWM(string(b))
}

// parseVmHWM returns the VmHWM line of a /proc/PID/status in bytes.
func parseVmHWM(status string) int64 {
	for l := range strings.SplitSeq(status, "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			f := strings.Fields(v)
			if len(f) == 2 && f[1] == "kB" {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n << 10
			}
		}
	}
	return 0
}

// ownCPUTime is this load generator's CPU time, user and system,
// without its children's: the servers it started are children of one of
// its threads, and cpuTime(os.Getpid()) counted them when that thread was
// the first (the client's CPU then held agentiso's).
func ownCPUTime() time.Duration {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0
	}
	return parseStatCPU(string(b))
}

// cpuTime is the CPU time, user and system, of pid and of its children
// (nginx's workers; agentiso has none), in /proc's clock ticks.
func cpuTime(pid int) time.Duration {
	if pid <= 0 {
		return 0
	}
	pids := []string{strconv.Itoa(pid)}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid)); err == nil {
		pids = append(pids, strings.Fields(string(b))...)
	}
	var total time.Duration
	for _, p := range pids {
		if b, err := os.ReadFile("/proc/" + p + "/stat"); err == nil {
			total += parseStatCPU(string(b))
		}
	}
	return total
}

// clockTick is the unit of /proc/PID/stat's times (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// parseStatCPU returns utime + stime of a /proc/PID/stat line.
func parseStatCPU(stat string) time.Duration {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 13 {
		return 0
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(u+s) * clockTick
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// environment describes the run: machine, versions, load.
func environment(c config, nginx string) string {
	kernel := "?"
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel = strings.TrimSpace(string(b))
	}
	nv := "?"
	if out, err := exec.Command(nginx, "-v").CombinedOutput(); err == nil {
		nv = strings.TrimSpace(strings.TrimPrefix(string(out), "nginx version: "))
	}
	return fmt.Sprintf("%s; %d CPUs, Linux %s; %s, %s built with %s; file %d MiB, trials of %s, %d per server and row, interleaved; load average at the start %s",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), runtime.NumCPU(), kernel, nv, filepath.Base(c.agentiso), runtime.Version(), c.size>>20, c.duration, c.repeat, loadavg())
}
