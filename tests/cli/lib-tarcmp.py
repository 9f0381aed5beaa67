# Compares tarballs and directory trees for the snapshot tests (tests/cli/t06*.sh).
#   members A.tar[.gz] B.tar[.gz] [--any-mtime]
#                                   the same members in the same order: name, type,
#                                   mode, link target, size, mtime, owner, contents
#   tree DIR1 DIR2                  the same files, directories and symlinks: type,
#                                   executable bit, contents, link targets
# Names are compared as bytes. Prints the differences and exits 1 when there are any.
import os
import stat
import sys
import tarfile


def members(path, mtime=True):
    out = []
    with tarfile.open(path, "r:*") as t:
        for m in t:
            data = t.extractfile(m).read() if m.isreg() else b""
            out.append((os.fsencode(m.name), m.type, m.mode, os.fsencode(m.linkname), m.size,
                        m.mtime if mtime else 0, m.uid, m.gid, data))
    return out


def tree(root):
    out = {}
    root = os.fsencode(root)
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            p = os.path.join(d, n)
            rel = os.path.relpath(p, root)
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(p))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir",)
            else:
                with open(p, "rb") as f:
                    out[rel] = ("file", bool(st.st_mode & 0o100), f.read())
    return out


def short(v):
    return repr(v)[:120]


def main():
    kind, a, b = sys.argv[1:4]
    if kind == "members":
        mtime = "--any-mtime" not in sys.argv[4:]
        ma, mb = members(a, mtime), members(b, mtime)
        bad = 0
        for i in range(max(len(ma), len(mb))):
            x = ma[i] if i < len(ma) else None
            y = mb[i] if i < len(mb) else None
            if x != y:
                print("member %d differs:\n  %s\n  %s" % (i, short(x and x[:8]), short(y and y[:8])))
                bad += 1
                if bad > 10:
                    break
        print("%d members compared" % len(ma))
        sys.exit(1 if bad else 0)
    ta, tb = tree(a), tree(b)
    bad = sorted(set(ta) ^ set(tb))
    for k in bad:
        print("only in %s: %r" % (a if k in ta else b, k))
    for k in sorted(set(ta) & set(tb)):
        if ta[k] != tb[k]:
            print("differs: %r: %s vs %s" % (k, short(ta[k][:2]), short(tb[k][:2])))
            bad.append(k)
    print("%d entries compared" % len(ta))
    sys.exit(1 if bad else 0)


main()
