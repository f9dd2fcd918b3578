package main

import "os"

// lookupEnv reads an environment variable (a seam for tests).
var lookupEnv = os.Getenv
