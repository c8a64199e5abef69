"""Where the code that ran comes from: the git revision, or a checksum of the source, and the
version (the reports and the recordings name it)."""

import hashlib
import pathlib
import subprocess


def _git_revision(root=None):
    """The checkout's short revision (with a note of uncommitted changes), or None where the
    code does not run from a git checkout."""
    root = pathlib.Path(root) if root else pathlib.Path(__file__).resolve().parents[3]
    if not (root / ".git").exists():
        return None
    try:
        r = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                           capture_output=True, text=True, timeout=10)
        rev = r.stdout.strip() if r.returncode == 0 else None
        if rev:
            d = subprocess.run(["git", "-C", str(root), "status", "--porcelain",
                                "--untracked-files=no", "src"], capture_output=True, text=True,
                               timeout=10)
            if d.stdout.strip():
                rev += " + uncommitted changes in src/"
        return rev
    except (OSError, subprocess.SubprocessError):
        return None


def source_checksum(pkg=None):
    """sha256 (first 16 hex digits) of ptxfp's Python source: every ``*.py`` of the package,
    by relative path and contents.  Names the code that ran where there is no git."""
    pkg = pathlib.Path(pkg) if pkg else pathlib.Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for f in sorted(pkg.rglob("*.py")):
        h.update(f.relative_to(pkg).as_posix().encode() + b"\0")
        h.update(f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def _version():
    from .. import __version__
    return __version__
