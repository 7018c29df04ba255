package credentials

import (
	"crypto/rand"
	"fmt"
	"io"
	"math/big"

	"golang.org/x/crypto/bcrypt"
)

// KubeadminPassword is the console password and its bcrypt hash.
type KubeadminPassword struct {
	Password string `json:"password"`
	Hash     string `json:"hash"`
}

const (
	passwordLower  = "abcdefghijkmnopqrstuvwxyz"
	passwordUpper  = "ABCDEFGHIJKLMNPQRSTUVWXYZ"
	passwordDigits = "23456789"
	passwordLength = 23
	// PasswordHashCost is bcrypt.DefaultCost, as upstream uses.
	PasswordHashCost = bcrypt.DefaultCost
)

func randInt(random io.Reader, max *big.Int) (*big.Int, error) {
	if random == nil {
		random = rand.Reader
	}
	return rand.Int(random, max)
}

// GenerateKubeadminPassword builds a 23-character password of the form
// xxxxx-xxxxx-xxxxx-xxxxx: random characters from the unambiguous alphabet
// (no l, O, 0, 1), each inserted at a random position, then positions 5,
// 11 and 17 replaced by '-'. It also returns the bcrypt hash (cost 10).
func GenerateKubeadminPassword(random io.Reader) (*KubeadminPassword, error) {
	alphabet := passwordLower + passwordUpper + passwordDigits
	pw := make([]byte, 0, passwordLength)
	for range passwordLength {
		ci, err := randInt(random, big.NewInt(int64(len(alphabet))))
		if err != nil {
			return nil, fmt.Errorf("kubeadmin password: %w", err)
		}
		pos, err := randInt(random, big.NewInt(int64(len(pw)+1)))
		if err != nil {
			return nil, fmt.Errorf("kubeadmin password: %w", err)
		}
		p := int(pos.Int64())
		pw = append(pw, 0)
		copy(pw[p+1:], pw[p:])
		pw[p] = alphabet[ci.Int64()]
	}
	for _, i := range []int{5, 11, 17} {
		pw[i] = '-'
	}
	hash, err := bcrypt.GenerateFromPassword(pw, PasswordHashCost)
	if err != nil {
		return nil, fmt.Errorf("kubeadmin password hash: %w", err)
	}
	return &KubeadminPassword{Password: string(pw), Hash: string(hash)}, nil
}

// Check reports whether password matches the stored hash.
func (k *KubeadminPassword) Check(password string) bool {
	return bcrypt.CompareHashAndPassword([]byte(k.Hash), []byte(password)) == nil
}
