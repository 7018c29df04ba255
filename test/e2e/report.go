package e2e

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The boot fixture's /init prints one report on the serial console:
//
//	AGENTISO-E2E-BEGIN
//	ROOTFS-SHA256 <hex> <size>      only with coreos.live.rootfs_url=: the
//	ROOTFS-FETCH-FAILED <reason>    fetched rootfs, or why it could not be fetched
//	IGNITION-SHA256 <hex>      or IGNITION-ABSENT
//	PATH F <path> <size> <sha256>   one line per path the initrds added
//	PATH D <path>                   (D directory, L symlink, O other)
//	CMDLINE <contents of /proc/cmdline>
//	DMESG <kernel log line about the initramfs>
//	UNPACK-FAILED                   only when the kernel reported a failure
//	AGENTISO-E2E-END
const (
	beginMarker = "AGENTISO-E2E-BEGIN"
	endMarker   = "AGENTISO-E2E-END"
)

// unpackFailure matches the kernel's messages for an initrd it could not
// unpack (the second one is printed instead when CONFIG_BLK_DEV_RAM is set).
var unpackFailure = regexp.MustCompile(`Initramfs unpacking failed|rootfs image is not initramfs`)

// PathInfo is one path the guest found in its root file system that the
// fixture's own initramfs does not contain.
type PathInfo struct {
	Type   byte   // 'F' file, 'D' directory, 'L' symlink, 'O' other
	Size   int64  // files only
	SHA256 string // files only
}

// Report is what the guest printed.
type Report struct {
	IgnitionPresent bool
	IgnitionSHA256  string
	Paths           map[string]PathInfo
	Cmdline         string
	Dmesg           []string
	UnpackFailed    bool
	// RootfsSHA256 and RootfsSize describe the root file system the guest
	// downloaded from its coreos.live.rootfs_url= argument; RootfsFetchFailed
	// is the reason when the download failed. All are empty without the argument.
	RootfsSHA256      string
	RootfsSize        int64
	RootfsFetchFailed string
}

// Kargs returns /proc/cmdline split into words.
func (r Report) Kargs() []string { return strings.Fields(r.Cmdline) }

// ParseReport extracts the last complete report from a serial console log.
func ParseReport(console []byte) (Report, error) {
	console = append([]byte("\n"), bytes.ReplaceAll(console, []byte("\r"), nil)...)
	begin := bytes.LastIndex(console, []byte("\n"+beginMarker+"\n"))
	if begin < 0 {
		return Report{}, errors.New("no report on the serial console (the guest never reached the fixture's /init)")
	}
	body := console[begin+1+len(beginMarker):] // starts with "\n"
	end := bytes.Index(body, []byte("\n"+endMarker))
	if end < 0 {
		return Report{}, errors.New("the guest's report is truncated (no end marker)")
	}
	body = body[:end]

	rep := Report{Paths: map[string]PathInfo{}}
	sawIgnition, sawCmdline := false, false
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		key, rest, _ := strings.Cut(line, " ")
		switch key {
		case "IGNITION-SHA256":
			if !isSHA256(rest) {
				return Report{}, fmt.Errorf("report: bad ignition digest %q", rest)
			}
			rep.IgnitionPresent, rep.IgnitionSHA256, sawIgnition = true, rest, true
		case "IGNITION-ABSENT":
			sawIgnition = true
		case "PATH":
			p, info, err := parsePathLine(rest)
			if err != nil {
				return Report{}, fmt.Errorf("report: %w", err)
			}
			rep.Paths[p] = info
		case "CMDLINE":
			rep.Cmdline, sawCmdline = rest, true
		case "DMESG":
			rep.Dmesg = append(rep.Dmesg, rest)
		case "UNPACK-FAILED":
			rep.UnpackFailed = true
		case "ROOTFS-SHA256":
			sum, size, ok := strings.Cut(rest, " ")
			n, err := strconv.ParseInt(size, 10, 64)
			if !ok || !isSHA256(sum) || err != nil || n < 0 {
				return Report{}, fmt.Errorf("report: bad rootfs line %q", line)
			}
			rep.RootfsSHA256, rep.RootfsSize = sum, n
		case "ROOTFS-FETCH-FAILED":
			rep.RootfsFetchFailed = strings.TrimSpace(rest)
			if rep.RootfsFetchFailed == "" {
				rep.RootfsFetchFailed = "no reason given"
			}
		default:
			// A stray kernel message interleaved with the report.
			continue
		}
	}
	if err := sc.Err(); err != nil {
		return Report{}, fmt.Errorf("report: %w", err)
	}
	if !sawIgnition || !sawCmdline {
		return Report{}, errors.New("report: ignition or cmdline line missing")
	}
	return rep, nil
}

func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}

func parsePathLine(s string) (string, PathInfo, error) {
	typ, rest, ok := strings.Cut(s, " ")
	if !ok || len(typ) != 1 || !strings.HasPrefix(rest, "/") {
		return "", PathInfo{}, fmt.Errorf("bad PATH line %q", s)
	}
	info := PathInfo{Type: typ[0]}
	switch info.Type {
	case 'D', 'L', 'O':
		return rest, info, nil
	case 'F':
		// The path may contain spaces: size and digest are the last two words.
		i := strings.LastIndexByte(rest, ' ')
		if i < 0 {
			return "", PathInfo{}, fmt.Errorf("bad PATH line %q", s)
		}
		info.SHA256 = rest[i+1:]
		j := strings.LastIndexByte(rest[:i], ' ')
		if j < 0 || !isSHA256(info.SHA256) {
			return "", PathInfo{}, fmt.Errorf("bad PATH line %q", s)
		}
		size, err := strconv.ParseInt(rest[j+1:i], 10, 64)
		if err != nil || size < 0 {
			return "", PathInfo{}, fmt.Errorf("bad size in PATH line %q", s)
		}
		info.Size = size
		return rest[:j], info, nil
	}
	return "", PathInfo{}, fmt.Errorf("bad PATH type in %q", s)
}

// Expect is what a booted ISO must show.
type Expect struct {
	// IgnitionSHA256 is the hex sha256 that /config.ign must have. Empty
	// means the ISO has no embedded config: /config.ign must be absent.
	IgnitionSHA256 string `json:"ignitionSHA256,omitempty"`
	// Paths are absolute paths that must exist in the guest's root file
	// system (put there by an embedded initrd), e.g.
	// "/etc/assisted/manifests/x.yaml".
	Paths []string `json:"paths,omitempty"`
	// Files maps absolute paths to the hex sha256 their content must have.
	Files map[string]string `json:"files,omitempty"`
	// AbsentPaths must not exist in the guest.
	AbsentPaths []string `json:"absentPaths,omitempty"`
	// Kargs are words that must each appear in /proc/cmdline.
	Kargs []string `json:"kargs,omitempty"`
	// RootfsSHA256, when set, is the hex sha256 of the root file system the
	// guest must have downloaded from its coreos.live.rootfs_url= argument
	// (minimal ISO, PXE). Not in cases files: those boots have no network.
	RootfsSHA256 string `json:"-"`
}

// Verify checks a serial console log against exp. volumeID is the ISO's
// volume ID: a coreos.liveiso= argument in the guest's command line must name
// it, or RHCOS would never find its root file system ("" for a network boot,
// which must not have the argument). Every failed check is reported; the
// error is nil only when all pass.
func Verify(console []byte, volumeID string, exp Expect) error {
	var errs []error
	if m := unpackFailure.Find(console); m != nil {
		errs = append(errs, fmt.Errorf("kernel could not unpack an initrd: console shows %q", m))
	}
	rep, err := ParseReport(console)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	if rep.UnpackFailed {
		errs = append(errs, fmt.Errorf("kernel could not unpack an initrd: %s", strings.Join(rep.Dmesg, " | ")))
	}
	switch {
	case rep.RootfsFetchFailed != "":
		errs = append(errs, fmt.Errorf("the guest could not fetch its rootfs (coreos.live.rootfs_url): %s", rep.RootfsFetchFailed))
	case exp.RootfsSHA256 != "" && rep.RootfsSHA256 == "":
		errs = append(errs, errors.New("the guest fetched no rootfs (no coreos.live.rootfs_url= argument?)"))
	case exp.RootfsSHA256 != "" && !strings.EqualFold(exp.RootfsSHA256, rep.RootfsSHA256):
		errs = append(errs, fmt.Errorf("fetched rootfs sha256 is %s (%d bytes), want %s", rep.RootfsSHA256, rep.RootfsSize, exp.RootfsSHA256))
	}
	switch {
	case exp.IgnitionSHA256 == "" && rep.IgnitionPresent:
		errs = append(errs, fmt.Errorf("/config.ign present (sha256 %s) but no config was expected", rep.IgnitionSHA256))
	case exp.IgnitionSHA256 != "" && !rep.IgnitionPresent:
		errs = append(errs, errors.New("/config.ign missing in the guest"))
	case exp.IgnitionSHA256 != "" && !strings.EqualFold(exp.IgnitionSHA256, rep.IgnitionSHA256):
		errs = append(errs, fmt.Errorf("/config.ign sha256 is %s, want %s", rep.IgnitionSHA256, exp.IgnitionSHA256))
	}
	for _, p := range exp.Paths {
		if _, ok := rep.Paths[p]; !ok {
			errs = append(errs, fmt.Errorf("missing path %s in the guest", p))
		}
	}
	for _, p := range slices.Sorted(maps.Keys(exp.Files)) {
		got, ok := rep.Paths[p]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("missing file %s in the guest", p))
		case got.Type != 'F':
			errs = append(errs, fmt.Errorf("%s is not a regular file in the guest", p))
		case !strings.EqualFold(got.SHA256, exp.Files[p]):
			errs = append(errs, fmt.Errorf("%s sha256 is %s, want %s", p, got.SHA256, exp.Files[p]))
		}
	}
	for _, p := range exp.AbsentPaths {
		if _, ok := rep.Paths[p]; ok {
			errs = append(errs, fmt.Errorf("path %s present in the guest but should be absent", p))
		}
	}
	words := rep.Kargs()
	for _, k := range exp.Kargs {
		if !slices.Contains(words, k) {
			errs = append(errs, fmt.Errorf("kernel argument %q missing from /proc/cmdline %q", k, rep.Cmdline))
		}
	}
	for _, w := range words {
		v, ok := strings.CutPrefix(w, "coreos.liveiso=")
		switch {
		case ok && volumeID == "":
			errs = append(errs, fmt.Errorf("coreos.liveiso=%s on a network boot, which has no ISO to find", v))
		case ok && v != volumeID:
			errs = append(errs, fmt.Errorf("coreos.liveiso=%s does not match the ISO volume ID %q", v, volumeID))
		}
	}
	return errors.Join(errs...)
}
