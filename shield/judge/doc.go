// Package judge is Tier 2 of the decision pipeline: an LLM asked about calls that tiers 0–1 left
// at ESCALATE (or that the bundle marks for review). It speaks two real HTTP APIs with net/http:
// OpenAI-compatible chat completions (OpenAI, vLLM, llama.cpp server, Ollama) and Anthropic
// Messages.
//
// The call is given to the model as data between per-request random delimiters, with the
// instruction that nothing inside them is an instruction, and the model must answer strict JSON
// — {"decision","confidence","reasoning","nonce"} — echoing a per-request nonce from crypto/rand.
// Anything else — bad JSON, a missing or wrong nonce, an unknown decision word, a refusal, an
// empty answer, a timeout, a transport or HTTP error, an answer over 1 MiB, an exhausted rate or
// token budget — becomes the configured fallback finding (ESCALATE to a human, or BLOCK), with
// rule "judge:fallback" and a reason saying why; never ALLOW, and never an error (an error would
// make the pipeline BLOCK regardless of the configured fallback). An ALLOW below MinConfidence
// becomes ESCALATE. Answers the model gave are cached for CacheTTL, keyed by the action hash and
// the prior tiers' rules; fallbacks are not cached.
//
// judge imports shield (it implements shield.Tier) and is imported only by cmd/shield, which
// builds it from the `judge:` section of the service configuration.
package judge
