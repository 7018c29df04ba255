// Command crdcheck is built inside the assisted-service checkout (go build
// -overlay, vendored modules) by test/upstream's TestHubManifestsAgainstCRDTypes:
// it decodes agentiso's hub manifests strictly into the REAL vendored types
// (metal3.io/v1alpha1 BareMetalHost, core/v1 Secret), runs Metal3's own
// create-time validation of the BareMetalHost (which parses the BMC address
// with baremetal-operator's bmc package), and reports what Metal3's bmc
// package makes of BMC addresses.
//
// Usage: crdcheck FILE... [-- ADDRESS...]
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	metal3 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"github.com/metal3-io/baremetal-operator/pkg/hardwareutils/bmc"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

func main() {
	failed := false
	fail := func(format string, a ...any) {
		fmt.Printf("FAIL "+format+"\n", a...)
		failed = true
	}
	args := os.Args[1:]
	var addrs []string
	for i, a := range args {
		if a == "--" {
			args, addrs = args[:i], args[i+1:]
			break
		}
	}
	for _, f := range args {
		b, err := os.ReadFile(f)
		if err != nil {
			fail("%v", err)
			continue
		}
		for i, doc := range strings.Split(string(b), "\n---\n") {
			j, err := yaml.YAMLToJSON([]byte(doc))
			if err != nil {
				fail("%s doc %d: %v", f, i, err)
				continue
			}
			var tm struct{ APIVersion, Kind string }
			_ = json.Unmarshal(j, &tm)
			dec := json.NewDecoder(bytes.NewReader(j))
			dec.DisallowUnknownFields()
			switch tm.Kind {
			case "BareMetalHost":
				var h metal3.BareMetalHost
				if err := dec.Decode(&h); err != nil {
					fail("%s doc %d: BareMetalHost: %v", f, i, err)
					continue
				}
				if tm.APIVersion != metal3.GroupVersion.String() {
					fail("%s doc %d: apiVersion %s, the type's is %s", f, i, tm.APIVersion, metal3.GroupVersion)
				}
				if _, err := h.ValidateCreate(); err != nil {
					fail("%s doc %d: Metal3's validation: %v", f, i, err)
					continue
				}
				acc, _ := bmc.NewAccessDetails(h.Spec.BMC.Address, h.Spec.BMC.DisableCertificateVerification)
				fmt.Printf("OK BareMetalHost %s/%s online=%v cleaning=%s bootMAC=%s bmc=%s credentials=%s insecure=%v boot=%s labels=%v annotations=%v\n",
					h.Namespace, h.Name, h.Spec.Online, h.Spec.AutomatedCleaningMode, h.Spec.BootMACAddress, h.Spec.BMC.Address,
					h.Spec.BMC.CredentialsName, h.Spec.BMC.DisableCertificateVerification, acc.BootInterface(), h.Labels, h.Annotations)
			case "Secret":
				var s corev1.Secret
				if err := dec.Decode(&s); err != nil {
					fail("%s doc %d: Secret: %v", f, i, err)
					continue
				}
				fmt.Printf("OK Secret %s/%s type=%s username=%d bytes password=%d bytes\n", s.Namespace, s.Name, s.Type, len(s.Data["username"]), len(s.Data["password"]))
			default:
				fail("%s doc %d: unexpected kind %q", f, i, tm.Kind)
			}
		}
	}
	for _, a := range addrs {
		acc, err := bmc.NewAccessDetails(a, true)
		if err != nil {
			fmt.Printf("ADDR %s error\n", a)
			continue
		}
		fmt.Printf("ADDR %s driver=%s boot=%s\n", a, acc.Driver(), acc.BootInterface())
	}
	if failed {
		os.Exit(1)
	}
}
