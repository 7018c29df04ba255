package rendezvous

import "strings"

// Hint returns a short, actionable hint for a failing validation id, or "".
func Hint(validationID string) string {
	id := validationID
	switch {
	case strings.Contains(id, "ntp"):
		return "the host clock is not synchronised: make sure the hosts reach an NTP server (agent-config additionalNTPSources) and check the time in the BIOS"
	case id == "has-min-valid-disks" || id == "sufficient-installation-disk-speed" || strings.Contains(id, "disk"):
		return "no usable installation disk: check disk size (at least 100 GB), speed (SSD/NVMe recommended) and the host's rootDeviceHints in agent-config.yaml"
	case strings.Contains(id, "hostname"):
		return "every host needs a unique, valid hostname that is not localhost: set hosts[].hostname in agent-config.yaml or fix DHCP/DNS"
	case strings.Contains(id, "machine-cidr"):
		return "the host's addresses must lie in install-config networking.machineNetwork; fix the CIDR or the host's static network config"
	case id == "connected" || strings.Contains(id, "connectivity") || strings.Contains(id, "majority") || strings.Contains(id, "reachable"):
		return "hosts cannot reach each other or the rendezvous host: check cabling, VLANs, firewalls and the static network config in agent-config.yaml"
	case strings.Contains(id, "domain-name-resolved") || strings.Contains(id, "dns"):
		return "the API/ingress DNS names do not resolve correctly: add api.<cluster>.<domain> and *.apps.<cluster>.<domain> records"
	case strings.Contains(id, "cpu") || strings.Contains(id, "memory"):
		return "the host has less CPU or memory than its role needs: add resources or change its role"
	case strings.Contains(id, "container-images"):
		return "release images cannot be pulled: check the mirror configuration and registry reachability"
	}
	return ""
}
