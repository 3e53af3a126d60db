package cache

import "testing"

func FuzzDecodeToken(f *testing.F) {
	f.Add(encodeToken(12, "ns/name"))
	f.Add("")
	f.Add("not-base64!")
	f.Add("eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6LTEsInN0YXJ0IjoiIn0")
	f.Fuzz(func(t *testing.T, s string) {
		tok, err := DecodeToken(s)
		if err != nil {
			return
		}
		if tok.Revision <= 0 || tok.Start == "" {
			t.Fatalf("accepted token %q as %+v", s, tok)
		}
		again, err := DecodeToken(encodeToken(tok.Revision, tok.Start))
		if err != nil || *again != *tok {
			t.Fatalf("round trip of %+v: %+v, %v", tok, again, err)
		}
	})
}
