package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/seed-a052040e/agentiso/data"
	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/fsutil"
)

// WriteAgentConfigTemplate writes the commented agent-config.yaml to start
// from into dir (create agent-config-template) and says what it wrote. An
// existing agent-config.yaml is never overwritten: it is the user's input.
func WriteAgentConfigTemplate(dir string) (*Created, error) {
	p := filepath.Join(dir, assetdir.AgentConfig)
	if _, err := os.Stat(p); err == nil {
		return nil, fmt.Errorf("%s already exists; agentiso never overwrites your inputs (remove it first to get a fresh template)", p)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	b := []byte(data.AgentConfigTemplate)
	mode := assetdir.Mode(assetdir.AgentConfig)
	if err := fsutil.WriteFileAtomic(p, b, mode); err != nil {
		return nil, fmt.Errorf("write %s: %w", p, err)
	}
	sum := sha256.Sum256(b)
	return &Created{Command: "create agent-config-template", Dir: dir, Files: []asset.Output{{
		Path: assetdir.AgentConfig, Size: int64(len(b)), SHA256: hex.EncodeToString(sum[:]), Mode: fmt.Sprintf("%04o", mode.Perm())}}}, nil
}
