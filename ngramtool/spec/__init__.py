"""The hash spec (:mod:`.hashspec`) and the hash families beside Engram's (:mod:`.families`)."""
