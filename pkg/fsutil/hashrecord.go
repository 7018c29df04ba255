package fsutil

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
)

// HashRecords remembers the SHA-256 of files agentiso hashed before, keyed
// by the file's identity (device, inode, size, modification and change
// times, read from the open file), so that the same bytes are not read and
// hashed again on the next run. A record holds for one file as it was: any
// write to it changes its times, a replacement its inode, and the record
// then no longer matches. Records are small files in Dir, written
// atomically; a missing, unreadable or foreign record is simply a miss. The
// zero value (Dir "") records nothing.
//
// Identity is available on Linux only; elsewhere every lookup misses.
type HashRecords struct {
	Dir string
}

// hashRecord is the content of one record file.
type hashRecord struct {
	Key    string `json:"key"`
	SHA256 string `json:"sha256"`
}

var hexSHA256 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// key names f as it is now, with what was hashed (salt: "" for the file
// itself, else a description of the bytes derived from it).
func (r HashRecords) key(f *os.File, salt string) (string, bool) {
	if r.Dir == "" || f == nil {
		return "", false
	}
	id, ok := fileIdentity(f)
	if !ok {
		return "", false
	}
	return id + "|" + salt, true
}

func (r HashRecords) path(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(r.Dir, hex.EncodeToString(sum[:])+".json")
}

// Lookup returns the SHA-256 recorded for f (with salt) and true, or false
// when there is no record for the file as it is now.
func (r HashRecords) Lookup(f *os.File, salt string) (string, bool) {
	key, ok := r.key(f, salt)
	if !ok {
		return "", false
	}
	b, err := ReadRegular(r.path(key), 4<<10)
	if err != nil {
		return "", false
	}
	var rec hashRecord
	if json.Unmarshal(b, &rec) != nil || rec.Key != key || !hexSHA256.MatchString(rec.SHA256) {
		return "", false
	}
	return rec.SHA256, true
}

// Record remembers sum as the SHA-256 of f (with salt) as it is now. It is
// best effort: a record that cannot be written only costs a hash later,
// so the error is for the caller to log, never to fail on.
func (r HashRecords) Record(f *os.File, salt, sum string) error {
	if !hexSHA256.MatchString(sum) {
		return errors.New("not a hex sha256: " + sum)
	}
	key, ok := r.key(f, salt)
	if !ok {
		return nil
	}
	b, err := json.Marshal(hashRecord{Key: key, SHA256: sum})
	if err != nil {
		return err
	}
	return WriteFileAtomic(r.path(key), b, 0o644)
}
