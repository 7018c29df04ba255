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
	withArch := func(a string) *InfraEnv {
		ie := &manifests.InfraEnv{}
		ie.Spec.CPUArchitecture = a
		return &InfraEnv{Manifest: ie}
	}
	for _, tc := range []struct {
		name string
		ie   *InfraEnv
		want string
	}{
		{"no InfraEnv", &InfraEnv{}, "x86_64"},
		{"no cpuArchitecture", withArch(""), "x86_64"},
		{"RPM spelling", withArch("aarch64"), "aarch64"},
		{"Go spelling", withArch("arm64"), "aarch64"},
		{"s390x", withArch("s390x"), "s390x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &Architecture{}
			require.NoError(t, a.Generate(context.Background(), asset.Parents{reflect.TypeOf(&InfraEnv{}): tc.ie}))
			assert.Equal(t, tc.want, a.Arch)
		})
	}
	err := (&Architecture{}).Generate(context.Background(), asset.Parents{reflect.TypeOf(&InfraEnv{}): withArch("sparc")})
	require.Error(t, err)
	assert.Equal(t, `cluster-manifests/infraenv.yaml: spec.cpuArchitecture: unsupported CPU architecture "sparc": use one of x86_64 (amd64), aarch64 (arm64), ppc64le, s390x`, err.Error())
}
