package arena

import (
	"fmt"

	"google.golang.org/protobuf/proto"
)

// Codec is the protobuf codec the SDK's stream uses, on google.golang.org/protobuf (the API the
// generated code is written for). gRPC's default codec goes through github.com/golang/protobuf,
// which Debian's golang-google-grpc-dev may bring in its version 1.3 (golang-github-golang-protobuf-1-3-dev
// satisfies its dependency first): that version cannot marshal these messages, and a bot using it
// fails on its Hello with a nil pointer panic. This codec works with either version installed.
type Codec struct{}

// Marshal encodes a generated message.
func (Codec) Marshal(v interface{}) ([]byte, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("cannot marshal %T: not a protobuf message", v)
	}
	return proto.Marshal(m)
}

// Unmarshal decodes into a generated message.
func (Codec) Unmarshal(data []byte, v interface{}) error {
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("cannot unmarshal into %T: not a protobuf message", v)
	}
	return proto.Unmarshal(data, m)
}

// Name is the codec's content subtype: gRPC's usual one.
func (Codec) Name() string { return "proto" }
