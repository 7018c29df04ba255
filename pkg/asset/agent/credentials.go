package agent

import (
	"context"
	"crypto/rand"
	"fmt"
	"time"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/credentials"
)

// AuthConfig is the assisted-service API key pair and the three persona
// tokens. Kept in the state so every re-run (and wait-for) uses the same.
type AuthConfig struct {
	credentials.AuthConfig
}

// Name implements asset.Asset. wait-for reads it from the state by this name.
func (*AuthConfig) Name() string { return "Agent Auth Config" }

// Doing implements asset.Described.
func (*AuthConfig) Doing() string { return "generate the install's API keys and tokens" }

// Dependencies implements asset.Asset.
func (*AuthConfig) Dependencies() []asset.Asset { return nil }

// Generate implements asset.Asset.
func (a *AuthConfig) Generate(context.Context, asset.Parents) error {
	ac, err := credentials.GenerateAuthConfig(rand.Reader)
	if err != nil {
		return err
	}
	a.AuthConfig = *ac
	return nil
}

// SignerCAs are the four CAs shipped to node zero so the new cluster trusts
// the admin kubeconfig written here.
type SignerCAs struct {
	credentials.SignerCAs
}

// Name implements asset.Asset.
func (*SignerCAs) Name() string { return "TLS Signer CAs" }

// Doing implements asset.Described.
func (*SignerCAs) Doing() string { return "generate the install's TLS signer CAs" }

// Dependencies implements asset.Asset.
func (*SignerCAs) Dependencies() []asset.Asset { return nil }

// Generate implements asset.Asset.
func (a *SignerCAs) Generate(context.Context, asset.Parents) error {
	s, err := credentials.GenerateSignerCAs(rand.Reader, time.Now())
	if err != nil {
		return err
	}
	a.SignerCAs = *s
	return nil
}

// KubeadminPassword is the console password (auth/kubeadmin-password,
// 0600) and its bcrypt hash (in the ISO).
type KubeadminPassword struct {
	credentials.KubeadminPassword
}

// Name implements asset.Asset.
func (*KubeadminPassword) Name() string { return "Kubeadmin Password" }

// Doing implements asset.Described.
func (*KubeadminPassword) Doing() string { return "generate the kubeadmin password" }

// Dependencies implements asset.Asset.
func (*KubeadminPassword) Dependencies() []asset.Asset { return nil }

// Generate implements asset.Asset.
func (a *KubeadminPassword) Generate(context.Context, asset.Parents) error {
	p, err := credentials.GenerateKubeadminPassword(rand.Reader)
	if err != nil {
		return err
	}
	a.KubeadminPassword = *p
	return nil
}

// Files implements asset.Writable.
func (a *KubeadminPassword) Files() ([]asset.File, error) {
	return []asset.File{{Path: assetdir.KubeadminPassword, Data: []byte(a.Password), Mode: assetdir.Mode(assetdir.KubeadminPassword)}}, nil
}

// AdminKubeconfig is auth/kubeconfig (0600): system:admin of the new cluster.
type AdminKubeconfig struct {
	Data []byte `json:"data"`
}

// Name implements asset.Asset.
func (*AdminKubeconfig) Name() string { return "Admin Kubeconfig" }

// Doing implements asset.Described.
func (*AdminKubeconfig) Doing() string { return "write the admin kubeconfig" }

// Dependencies implements asset.Asset.
func (*AdminKubeconfig) Dependencies() []asset.Asset {
	return []asset.Asset{&SignerCAs{}, &ClusterDeployment{}}
}

// Generate implements asset.Asset.
func (a *AdminKubeconfig) Generate(_ context.Context, p asset.Parents) error {
	cd := asset.Get[*ClusterDeployment](p).Manifest
	s := asset.Get[*SignerCAs](p).SignerCAs
	kc, err := credentials.GenerateAdminKubeconfig(rand.Reader, &s, cd.Spec.ClusterName, cd.Spec.BaseDomain, time.Now())
	if err != nil {
		return err
	}
	b, err := kc.Marshal()
	if err != nil {
		return fmt.Errorf("encode kubeconfig: %w", err)
	}
	a.Data = b
	return nil
}

// Files implements asset.Writable.
func (a *AdminKubeconfig) Files() ([]asset.File, error) {
	return []asset.File{{Path: assetdir.Kubeconfig, Data: a.Data, Mode: assetdir.Mode(assetdir.Kubeconfig)}}, nil
}

// InfraEnvID is the ID node zero registers its InfraEnv under.
type InfraEnvID struct {
	ID string `json:"id"`
}

// Name implements asset.Asset.
func (*InfraEnvID) Name() string { return "InfraEnv ID" }

// Doing implements asset.Described.
func (*InfraEnvID) Doing() string { return "generate the InfraEnv ID" }

// Dependencies implements asset.Asset.
func (*InfraEnvID) Dependencies() []asset.Asset { return nil }

// Generate implements asset.Asset: a random (version 4) UUID.
func (a *InfraEnvID) Generate(context.Context, asset.Parents) error {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	a.ID = fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
	return nil
}
