package live

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Proxy is an HTTP proxy for the lab (CONNECT tunnels and plain HTTP
// requests) that requires Basic proxy authentication and records every
// request it gets, so a test can prove that the hosts went through it.
type Proxy struct {
	Addr string

	user, pass string
	srv        *http.Server
	upstream   *http.Transport
	mu         sync.Mutex
	log        []ProxyRequest
}

// ProxyRequest is one request the proxy received.
type ProxyRequest struct {
	Method, Target string
	Authorized     bool
}

// StartProxy listens on listen and requires user:pass (the decoded
// credentials; the URL the hosts get carries them percent-encoded).
func StartProxy(ctx context.Context, listen, user, pass string) (*Proxy, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("proxy: listen on %s: %w", listen, err)
	}
	p := &Proxy{Addr: ln.Addr().String(), user: user, pass: pass, upstream: &http.Transport{Proxy: nil, ResponseHeaderTimeout: 2 * time.Minute}}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// Requests returns what the proxy received so far.
func (p *Proxy) Requests() []ProxyRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]ProxyRequest(nil), p.log...)
}

// Close stops the proxy.
func (p *Proxy) Close() error { return p.srv.Close() }

func (p *Proxy) authorized(r *http.Request) bool {
	h := r.Header.Get("Proxy-Authorization")
	enc, ok := strings.CutPrefix(h, "Basic ")
	if !ok {
		return false
	}
	b, err := base64.StdEncoding.DecodeString(enc)
	return err == nil && string(b) == p.user+":"+p.pass
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	target := r.Host
	if r.Method != http.MethodConnect {
		target = r.URL.String()
	}
	ok := p.authorized(r)
	p.mu.Lock()
	p.log = append(p.log, ProxyRequest{Method: r.Method, Target: target, Authorized: ok})
	p.mu.Unlock()
	if !ok {
		w.Header().Set("Proxy-Authenticate", `Basic realm="live-lab"`)
		http.Error(w, "proxy authentication required", http.StatusProxyAuthRequired)
		return
	}
	if r.Method == http.MethodConnect {
		p.tunnel(w, r)
		return
	}
	if r.URL.Host == "" {
		http.Error(w, "not a proxy request", http.StatusBadRequest)
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.Header.Del("Proxy-Authorization")
	// Straight to the target: never through a proxy of the test machine's environment.
	resp, err := p.upstream.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request) {
	d := net.Dialer{Timeout: 10 * time.Second}
	upstream, err := d.DialContext(r.Context(), "tcp", r.Host)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		upstream.Close()
		http.Error(w, "hijacking not supported", http.StatusInternalServerError)
		return
	}
	client, buf, err := hj.Hijack()
	if err != nil {
		upstream.Close()
		return
	}
	if _, err := client.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		client.Close()
		upstream.Close()
		return
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		_, _ = io.Copy(upstream, buf)
		closeWrite(upstream)
	}()
	go func() {
		defer wg.Done()
		_, _ = io.Copy(client, upstream)
		closeWrite(client)
	}()
	wg.Wait()
	client.Close()
	upstream.Close()
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}
