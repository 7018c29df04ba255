package live

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Console markers printed by the live fixture (hack/build-live-fixture.sh).
const (
	initrdFailed = "LIVE-INITRD-FAILED:"
	reportBegin  = "LIVE-REPORT-BEGIN "
	reportEnd    = "LIVE-REPORT-END "
)

// UnitState is one line of `systemctl list-units`.
type UnitState struct {
	Load, Active, Sub string
}

// Addr is one address of an interface, from `ip -j addr`.
type Addr struct {
	Family    string `json:"family"`
	Local     string `json:"local"`
	PrefixLen int    `json:"prefixlen"`
}

// Link is one interface from `ip -j addr`.
type Link struct {
	Name     string `json:"ifname"`
	MAC      string `json:"address"`
	Master   string `json:"master"`
	LinkInfo *struct {
		Kind string `json:"info_kind"`
	} `json:"linkinfo"`
	Addrs []Addr `json:"addr_info"`
}

// Report is one LIVE-REPORT block: the state of a host at one moment.
type Report struct {
	Seq        int
	Hostname   string
	Links      []Link
	Units      map[string]UnitState
	Failed     []string
	Journal    map[string][]string // failed unit -> its last journal lines
	Images     []string            // "repository@digest tag"
	Containers []string            // "name status image"
	Standins   []string            // calls logged by the RHCOS stand-ins
	Node0      bool
}

// InitrdFailure returns the initramfs failure line, if the console has one.
func InitrdFailure(console []byte) string {
	i := bytes.Index(console, []byte(initrdFailed))
	if i < 0 {
		return ""
	}
	line := console[i:]
	if j := bytes.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	return strings.TrimSpace(string(line))
}

// ParseReports returns every complete report on the console, oldest first.
// A block cut off by the end of the console (or by another block) is ignored.
func ParseReports(console []byte) ([]Report, error) {
	var out []Report
	var cur *Report
	sc := bufio.NewScanner(bytes.NewReader(console))
	sc.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		// The kernel or systemd may write to the same console: markers
		// are matched anywhere on the line.
		if i := strings.Index(line, reportBegin); i >= 0 {
			seq, err := strconv.Atoi(strings.TrimSpace(line[i+len(reportBegin):]))
			if err != nil {
				cur = nil
				continue
			}
			cur = &Report{Seq: seq, Units: map[string]UnitState{}, Journal: map[string][]string{}}
			continue
		}
		if cur == nil {
			continue
		}
		if i := strings.Index(line, reportEnd); i >= 0 {
			if seq, err := strconv.Atoi(strings.TrimSpace(line[i+len(reportEnd):])); err == nil && seq == cur.Seq {
				out = append(out, *cur)
			}
			cur = nil
			continue
		}
		key, rest, _ := strings.Cut(line, " ")
		switch key {
		case "HOSTNAME":
			cur.Hostname = rest
		case "IPADDR":
			if strings.TrimSpace(rest) == "" {
				continue
			}
			var links []Link
			if err := json.Unmarshal([]byte(rest), &links); err != nil {
				return out, fmt.Errorf("report %d: ip -j addr: %w", cur.Seq, err)
			}
			cur.Links = links
		case "UNIT":
			f := strings.Fields(rest)
			if len(f) == 4 {
				cur.Units[f[0]] = UnitState{Load: f[1], Active: f[2], Sub: f[3]}
			}
		case "FAILED":
			cur.Failed = append(cur.Failed, rest)
		case "JOURNAL":
			unit, msg, _ := strings.Cut(rest, " ")
			cur.Journal[unit] = append(cur.Journal[unit], msg)
		case "IMAGE":
			cur.Images = append(cur.Images, rest)
		case "CONTAINER":
			cur.Containers = append(cur.Containers, rest)
		case "STANDIN":
			cur.Standins = append(cur.Standins, rest)
		case "NODE0":
			cur.Node0 = rest == "yes"
		}
	}
	return out, sc.Err()
}

// Last returns the newest complete report, or nil.
func Last(reports []Report) *Report {
	if len(reports) == 0 {
		return nil
	}
	return &reports[len(reports)-1]
}

// Link returns the interface with the given MAC (case-insensitive), or nil.
func (r *Report) LinkByMAC(mac string) *Link {
	for i := range r.Links {
		if strings.EqualFold(r.Links[i].MAC, mac) && r.Links[i].Master == "" {
			return &r.Links[i]
		}
	}
	return nil
}

// LinkByName returns the interface with the given name, or nil.
func (r *Report) LinkByName(name string) *Link {
	for i := range r.Links {
		if r.Links[i].Name == name {
			return &r.Links[i]
		}
	}
	return nil
}

// HasAddr reports whether l holds ip/prefix.
func (l *Link) HasAddr(ip string, prefix int) bool {
	for _, a := range l.Addrs {
		if a.Local == ip && a.PrefixLen == prefix {
			return true
		}
	}
	return false
}

// Kind is the link's kind (bond, vlan, ...), or "" for a plain NIC.
func (l *Link) Kind() string {
	if l.LinkInfo == nil {
		return ""
	}
	return l.LinkInfo.Kind
}

// FailedSummary prints each failed unit with its journal, for an error message.
func (r *Report) FailedSummary() string {
	var b strings.Builder
	units := append([]string(nil), r.Failed...)
	sort.Strings(units)
	for _, u := range units {
		fmt.Fprintf(&b, "failed unit %s; journalctl -u %s:\n", u, u)
		for _, l := range r.Journal[u] {
			fmt.Fprintf(&b, "    %s\n", l)
		}
	}
	return b.String()
}
