# A user's own sitecustomize: the companion must run it (once), after itself.
import sys

sys.stderr.write("user sitecustomize ran\n")
USER_SITE_RAN = True
