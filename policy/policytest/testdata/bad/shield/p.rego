package shield

decision := {"deny": deny}

deny contains {"rule": "net.any", "reason": "network"} if input.class == "net_request"
