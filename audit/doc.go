// Package audit owns Shield's tamper-evident audit trail: records as canonical JSON lines
// (RFC 8785), an RFC 6962 hash chain and Merkle tree over them, signed checkpoints in the C2SP
// tlog-checkpoint format, durable group-committed appends (each commit ends with the signed
// checkpoint record that covers it), self-recovery from write failures, segment rotation, offline
// verification and indexed queries.
//
// audit imports nothing of this module. The decision pipeline's recorder (cmd/shield), the
// AuditService adapter (shield/server), audit/rekor and the shield command may import it.
//
// # Record
//
// Each record is one line of JCS-canonical JSON:
//
//	{"hash":H,"payload":P,"prev":PH,"seq":N,"time":T,"type":Y}
//
// H is hex(SHA-256(0x00 || body)), the RFC 6962 leaf hash of body, where body is the canonical
// record without its "hash" member. PH is the hash of record N-1 (64 zeros for record 0), so the
// leaf hashes form a chain; the Merkle tree over all leaf hashes (leaf index = seq) is the one
// checkpoints sign. Times are UTC, fixed-width nanoseconds, and never decrease along the log.
package audit
