package agent_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
)

// offlineRelease turns a test's "repo:<version>-<arch>" into the release
// by digest with that version, used without a registry (--offline). The
// digest is a stand-in derived from the tag.
func offlineRelease(tagged string) (*agent.ReleaseImage, error) {
	i := strings.LastIndex(tagged, ":")
	repo, tag := tagged[:i], tagged[i+1:]
	version := tag[:strings.LastIndex(tag, "-")]
	sum := sha256.Sum256([]byte(tagged))
	return agent.OfflineRelease(repo+"@sha256:"+hex.EncodeToString(sum[:]), version)
}
