module react-conformance/protocol

go 1.22
