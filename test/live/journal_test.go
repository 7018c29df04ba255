package live

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Lines as podman 4.3 prints them in the lab (short-monotonic journal).
const (
	jTimeout = `[  172.118003] sno-live release-image-download.sh[1021]: Error: initializing source docker://quay.io/openshift-release-dev/ocp-release@sha256:076c: (Mirrors also failed: [192.168.111.1:5000/openshift-release-dev/ocp-release@sha256:076c: pinging container registry 192.168.111.1:5000: Get "https://192.168.111.1:5000/v2/": net/http: TLS handshake timeout]): quay.io/openshift-release-dev/ocp-release@sha256:076c: pinging container registry quay.io: Get "https://quay.io/v2/": dial tcp: lookup quay.io on 192.168.111.1:53: read udp 192.168.111.80:51958->192.168.111.1:53: read: connection refused`
	jX509    = `[  180.5] sno-live release-image-download.sh[1021]: Error: initializing source docker://quay.io/openshift-release-dev/ocp-release@sha256:076c: (Mirrors also failed: [192.168.111.1:5000/openshift-release-dev/ocp-release@sha256:076c: pinging container registry 192.168.111.1:5000: Get "https://192.168.111.1:5000/v2/": tls: failed to verify certificate: x509: certificate signed by unknown authority]): quay.io/openshift-release-dev/ocp-release@sha256:076c: pinging container registry quay.io: Get "https://quay.io/v2/": dial tcp: lookup quay.io on 192.168.111.1:53: read: connection refused`
	jTag     = `[  181.0] sno-live release-image-download.sh[1021]: Error: initializing source docker://quay.io/openshift-release-dev/ocp-release:4.20.0-x86_64: pinging container registry quay.io: Get "https://quay.io/v2/": dial tcp: lookup quay.io on 192.168.111.1:53: read: connection refused`
	// containers/image's words for a blob whose bytes are not its digest's:
	// an image's config (ConfigBlob) and a layer (the digesting reader).
	jConfigDigest = `[  190.0] sno-live extract-agent.sh[1402]: Error: parsing image configuration: Download config.json digest sha256:1111 does not match expected sha256:2222`
	jLayerDigest  = `[  191.0] sno-live podman[1500]: Error: writing blob: storing blob to file "/var/tmp/storage123/1": happened during read: Digest did not match, expected sha256:3333, got sha256:4444`
	jMissing      = `[  182.0] sno-live podman[1300]: Error: initializing source docker://quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:aaaa: (Mirrors also failed: [192.168.111.1:5000/openshift-release-dev/ocp-v4.0-art-dev@sha256:aaaa: reading manifest sha256:aaaa in 192.168.111.1:5000/openshift-release-dev/ocp-v4.0-art-dev: manifest unknown: manifest unknown]): quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:aaaa: pinging container registry quay.io: dial tcp: lookup quay.io: connection refused`
)

func TestPullErrors(t *testing.T) {
	journal := "[    1.0] sno-live kernel: Linux version 6.1\n" +
		"[   12.0] sno-live release-image-download.sh[1021]: Pulling quay.io/openshift-release-dev/ocp-release@sha256:076c...\n" +
		jTimeout + "\r\n" +
		"[  175.0] sno-live release-image-download.sh[1021]: Pulling quay.io/openshift-release-dev/ocp-release@sha256:076c failed, retrying in 5 seconds...\n"
	errs := PullErrors([]byte(journal))
	require.Len(t, errs, 1)
	assert.Equal(t, PullTransient, errs[0].Kind)
	assert.False(t, errs[0].Fatal(), "a TLS handshake timeout against the mirror is retried by the scripts")
	_, fatal := FirstFatal(errs)
	assert.False(t, fatal)

	for _, c := range []struct {
		line string
		kind PullErrorKind
		says string
	}{
		{jX509, PullUntrusted, "x509"},
		{jTag, PullNotMirrored, "never went to the mirror"},
		{jMissing, PullMissing, "does not have the image"},
		{jConfigDigest, PullDigestMismatch, "digest did not match"},
		{jLayerDigest, PullDigestMismatch, "digest did not match"},
	} {
		errs := PullErrors([]byte(jTimeout + "\n" + c.line + "\n"))
		require.Len(t, errs, 2)
		e, ok := FirstFatal(errs)
		require.True(t, ok, c.line)
		assert.Equal(t, c.kind, e.Kind, c.line)
		assert.Equal(t, c.line, e.Line)
		assert.Contains(t, e.Kind.String(), c.says)
	}
	assert.Empty(t, PullErrors(nil))
	assert.Equal(t, "transient", PullTransient.String())
}

func FuzzPullErrors(f *testing.F) {
	for _, s := range []string{jTimeout, jX509, jTag, jMissing, ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, journal []byte) {
		for _, e := range PullErrors(journal) {
			_ = e.Kind.String()
		}
	})
}

func TestJournalProblems(t *testing.T) {
	journal := `[  190.0] sno-live systemd[1]: Started assisted-service.service - assisted-service REST API.
[  190.5] sno-live service[1571]: assisted-service: AUTH_TYPE is "x": the agent flow authenticates with AUTH_TYPE=agent-installer-local
[  195.7] sno-live podman[1589]: 2026-11-24 12:04:13.8137555 +0000 UTC m=+3.813250651 container died 8e32 (image=quay.io/x, name=service)
[  198.2] sno-live systemd[1]: assisted-service.service: Main process exited, code=exited, status=1/FAILURE
[  198.3] sno-live systemd[1]: agent.service: Main process exited, code=exited, status=0/SUCCESS
[  200.7] sno-live systemd[1]: assisted-service.service: Failed with result 'exit-code'.
[  210.9] sno-live systemd[1]: assisted-service.service: Scheduled restart job, restart counter is at 1.
`
	got := JournalProblems([]byte(journal), 10)
	assert.Equal(t, []string{
		`[  190.5] sno-live service[1571]: assisted-service: AUTH_TYPE is "x": the agent flow authenticates with AUTH_TYPE=agent-installer-local`,
		`[  198.2] sno-live systemd[1]: assisted-service.service: Main process exited, code=exited, status=1/FAILURE`,
		`[  200.7] sno-live systemd[1]: assisted-service.service: Failed with result 'exit-code'.`,
		`[  210.9] sno-live systemd[1]: assisted-service.service: Scheduled restart job, restart counter is at 1.`,
	}, got)
	assert.Len(t, JournalProblems([]byte(journal), 2), 2)
}

func TestLinesContaining(t *testing.T) {
	b := []byte("a level=error x\nb ok\nc level=fatal y\nd level=error z\n")
	assert.Equal(t, []string{"c level=fatal y", "d level=error z"}, LinesContaining(b, []string{"level=error", "level=fatal"}, 2))
	line, ok := FirstLineContaining(b, []string{"fatal"})
	assert.True(t, ok)
	assert.Equal(t, "c level=fatal y", line)
	_, ok = FirstLineContaining(b, []string{"nope"})
	assert.False(t, ok)
}

// The node-local registry's access log, as podman's journald log driver
// puts distribution's combined-format lines in the journal.
func TestRegistryRequests(t *testing.T) {
	journal := "[  200.0] sno-live agent-payload-registry[1600]: time=\"2026-11-28T10:00:00Z\" level=info msg=\"listening on [::]:22625, tls\"\n" +
		`[  201.0] sno-live agent-payload-registry[1600]: 127.0.0.1 - - [28/Nov/2026:10:00:01 +0000] "GET /v2/ HTTP/1.1" 200 2 "" "curl/7.88.1"` + "\n" +
		`[  202.0] sno-live agent-payload-registry[1600]: 127.0.0.1 - - [28/Nov/2026:10:00:02 +0000] "GET /v2/openshift/release-images/manifests/sha256:abcd HTTP/1.1" 200 1234 "" "containers/5.23.1 (github.com/containers/image)"` + "\r\n" +
		`[  203.0] sno-live agent-payload-registry[1600]: 127.0.0.1 - - [28/Nov/2026:10:00:03 +0000] "HEAD /v2/openshift/release/blobs/sha256:ef01 HTTP/1.1" 404 0 "" "containers/5.23.1"` + "\n" +
		`[  204.0] sno-live agent-payload-registry[1600]: 127.0.0.1 - - [28/Nov/2026:10:00:04 +0000] "GET /v2/openshift/release/manifests/4.23.0-x86_64-installer HTTP/1.1" 200 99 "" "containers/5.23.1"` + "\n" +
		"[  205.0] sno-live assisted-service[1700]: GET /v2/openshift/release/manifests/sha256:ffff is not an access log line\n"
	got := RegistryRequests([]byte(journal))
	require.Len(t, got, 3)
	assert.Equal(t, RegistryRequest{Method: "GET", Repository: "openshift/release-images", Kind: "manifests", Reference: "sha256:abcd", Status: 200}, withoutLine(got[0]))
	assert.True(t, got[0].ByDigest())
	assert.Equal(t, RegistryRequest{Method: "HEAD", Repository: "openshift/release", Kind: "blobs", Reference: "sha256:ef01", Status: 404}, withoutLine(got[1]))
	assert.False(t, got[2].ByDigest(), "a tag")
	assert.Equal(t, "4.23.0-x86_64-installer", got[2].Reference)
	assert.Contains(t, got[0].Line, "agent-payload-registry")
	assert.Empty(t, RegistryRequests([]byte(jTimeout)))
}

func withoutLine(r RegistryRequest) RegistryRequest { r.Line = ""; return r }
