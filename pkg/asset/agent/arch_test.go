package agent

import (
	"context"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/manifests"
)

func TestArchitecture(t *testing.T) {
	userIE := func(a string) *UserInfraEnv {
		ie := &manifests.InfraEnv{}
		ie.Spec.CPUArchitecture = a
		return &UserInfraEnv{Manifest: ie}
	}
	ic := func(a string) *InstallConfig {
		return &InstallConfig{Config: &manifests.InstallConfig{ControlPlane: &manifests.MachinePool{Architecture: a}}}
	}
	parents := func(u *UserInfraEnv, i *InstallConfig) asset.Parents {
		return asset.Parents{reflect.TypeOf(&UserInfraEnv{}): u, reflect.TypeOf(&InstallConfig{}): i}
	}
	for _, tc := range []struct {
		name string
		p    asset.Parents
		want string
	}{
		{"neither", parents(&UserInfraEnv{}, &InstallConfig{}), "x86_64"},
		{"install-config without architecture", parents(&UserInfraEnv{}, ic("")), "x86_64"},
		{"install-config, Go spelling", parents(&UserInfraEnv{}, ic("arm64")), "aarch64"},
		{"install-config, ppc64le", parents(&UserInfraEnv{}, ic("ppc64le")), "ppc64le"},
		{"InfraEnv without cpuArchitecture", parents(userIE(""), ic("arm64")), "x86_64"},
		{"InfraEnv, RPM spelling", parents(userIE("aarch64"), &InstallConfig{}), "aarch64"},
		{"InfraEnv, Go spelling", parents(userIE("arm64"), &InstallConfig{}), "aarch64"},
		{"the user's InfraEnv wins", parents(userIE("s390x"), ic("arm64")), "s390x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &Architecture{}
			require.NoError(t, a.Generate(context.Background(), tc.p))
			assert.Equal(t, tc.want, a.Arch)
		})
	}
	err := (&Architecture{}).Generate(context.Background(), parents(userIE("sparc"), ic("arm64")))
	require.Error(t, err)
	assert.Equal(t, `cluster-manifests/infraenv.yaml: spec.cpuArchitecture: unsupported CPU architecture "sparc": use one of x86_64 (amd64), aarch64 (arm64), ppc64le, s390x`, err.Error())
	err = (&Architecture{}).Generate(context.Background(), parents(&UserInfraEnv{}, ic("sparc")))
	require.Error(t, err)
	assert.Equal(t, `install-config.yaml: controlPlane.architecture: unsupported CPU architecture "sparc": use one of x86_64 (amd64), aarch64 (arm64), ppc64le, s390x`, err.Error())
}
