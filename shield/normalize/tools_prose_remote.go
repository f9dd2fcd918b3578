package normalize

import "regexp"

// Text that tells an agent to fetch content from a URL and execute, run or follow what it returns
// is remote code, wherever the text lives (a schedule's prompt, a sub-agent's task, a memory, a
// message to an agent): the agent that acts on it becomes `curl URL | sh`. The sentence is walked
// as that pipeline, so the rules that judge a download run by a shell judge it too.
//
// Both halves must hold in one sentence: a fetch verb before an http(s) URL, and an execution verb
// whose object is what was fetched ("run it", "execute whatever command it returns", "follow the
// instructions there"). "Summarise the PRs on URL" or "check URL and run the tests" has no such
// object and stays a plain request.

var (
	remoteFetchRE = regexp.MustCompile(`(?i)\b(?:check|fetch|download|get|grab|pull|read|load|poll|visit|open|retrieve|curl|wget|query|request|hit|look\s+at|go\s+to)\b[^.;\n]{0,40}?\b(https?://[^\s'"<>)]+)`)
	remoteRunRE   = regexp.MustCompile(`(?i)\b(?:execute|exec|run|eval|evaluate|follow|obey|carry\s+out|perform|apply|source|do)\s+(?:(?:the|any|all|every|each|its|whatever|what|exactly)\s+){0,2}(?:(?:shell|bash|returned|remote|downloaded|fetched|received|new|listed|posted)\s+)?(?:it|that|them|whatever|what\s+it|returned|response|output|contents?|script|commands?|instructions?|payload|code|body|says)\b`)
)

// remoteInstructions adds `curl URL | sh` for each sentence that fetches a URL and runs its content.
func (s *state) remoteInstructions(sentences []string) {
	n := 0
	for _, sent := range sentences {
		m := remoteFetchRE.FindStringSubmatchIndex(sent)
		if m == nil {
			continue
		}
		r := remoteRunRE.FindStringIndex(sent)
		if r == nil || negatedRE.MatchString(sent[:r[0]]) {
			continue
		}
		if n++; n > maxProseCommands {
			return
		}
		url := sent[m[2]:m[3]]
		s.walker().script("curl -s "+quoteWord(url)+" | sh", 1, "instructions", false)
	}
}
