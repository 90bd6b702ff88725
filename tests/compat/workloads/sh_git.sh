# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# git on a workspace reused across launches: run-compat launches this twice on the same
# workspace ($1 = first | again). The first launch creates a repository and commits with git's
# default identity (from the passwd entry); the next, a new `mncctl run`, commits on top, and
# chmods, touches and copies over the earlier files.
. "$(dirname "$0")/compat.sh"
cd "$TMPDIR" || fail "cd"
export GIT_AUTHOR_EMAIL=agent@example.org GIT_COMMITTER_EMAIL=agent@example.org
if [ "$1" = first ]; then
    check "git init" git init -q repo
    cd repo || fail "cd repo"
    echo one >f; chmod 644 f
    check "git add" git add f
    check "git commit" git commit -qm one
else
    cd repo || fail "cd repo"
    check "git status" git status --porcelain
    check "chmod an earlier file" chmod 600 f
    check "touch -d an earlier file" touch -d 2020-01-01 f
    check "cp over an earlier file" cp /etc/hostname f
    echo two >>f
    check "git commit" git commit -qam two
    check "git log" [ "$(git log --format=%s | tr '\n' ' ')" = "two one " ]
    check "author name from passwd" [ -n "$(git log -1 --format=%an)" ]
    check "git gc" git gc -q
fi
report "$1"
