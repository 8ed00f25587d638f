"""Per-program rules of the destructive-command seatbelt (see seatbelt for the walk).

Each rule looks at one program's arguments after quote removal, so it can ask about what the
program will do (`git push --mirror`, `rm -r`, `find -delete`) and not about text that merely
looks alike (`grep -rn 'rm -r'`, `pytest -k reboot`). Reasons are short phrases for the approval
prompt ("destructive: recursive delete").
"""

from __future__ import annotations

import re
from collections.abc import Callable

from myrm_tui.agent.permissions.protected_paths import SHELL_STARTUP_DIRS, SHELL_STARTUP_FILES, WORKSPACE_PROTECTED_DIRS

# Programs that delete what they are given: run by find -exec or xargs they delete in bulk.
DELETERS = frozenset({"rm", "unlink", "shred", "rmdir", "srm", "trash", "trash-put", "gio"})

# -- inline interpreter code --------------------------------------------------------------------
# Recursive-delete calls of python, perl, ruby, node, PowerShell.
RECURSIVE_DELETE_API = re.compile(
    r"\b(?:rmtree|remove_tree|rm_rf|rm_r|rimraf|removedirs|emptyDirSync|deleteRecursively)\b"
    r"|\b(?:rm|rmSync|rmdir|rmdirSync)\s*\([^)]*recursive"
    r"|Remove-Item\b[^;]*-Recurse"
)
# Reaching a function by its name in a string (getattr(shutil, "rmtree")).
DYNAMIC_LOOKUP = re.compile(r"\b(?:getattr|__import__|globals|import_module|send|method)\b")
RUNS_CODE = re.compile(r"\b(?:exec|eval|compile|Function|execfile|runpy)\s*\(|\beval\b")
DECODES = re.compile(
    r"b64decode|base64|\bdecode\s*\(|decompress|fromhex|unhexlify|\batob\b|"
    r"Buffer\.from|rot13|marshal|pickle\.loads|\bchr\s*\(|\bpack\s*\("
)
# Calls that hand a string to a shell or start a process.
PROCESS_CALL = re.compile(
    r"\b(?:system|popen|Popen|spawn\w*|exec[lv]p?e?|call|check_call|check_output|run|getoutput|"
    r"getstatusoutput|execSync|execFileSync|spawnSync|exec|open3|capture2e?)\s*[(\[]|`|\bqx\b|%x\b"
    r"|\bsystem\b"
)
# Something in the code writes a file.
WRITES = re.compile(
    r"""\bopen\s*\([^)]*['"][wax+]|write_text|write_bytes|writeFile|appendFile|"""
    r"""\bwrite\s*\(|>>|\bprint\s*\{|File\.write|IO\.write|copy|move|rename|symlink"""
)
_LITERAL = re.compile(
    r"""(?:[rRbBuUfF]{0,2})('''[\s\S]*?'''|\"\"\"[\s\S]*?\"\"\"|'(?:\\.|[^'\\\n])*'|"""
    r""""(?:\\.|[^"\\\n])*")"""
)


def string_literals(code: str) -> list[str]:
    out = []
    for match in _LITERAL.finditer(code):
        body = match.group(1)
        quote = 3 if body[:3] in ("'''", '"""') else 1
        out.append(body[quote:-quote])
    return out


def without_literals(code: str) -> str:
    return _LITERAL.sub('""', code)


# -- paths a command must not write -------------------------------------------------------------
_BLOCK_DEVICE = re.compile(r"^/dev/(?:sd|hd|vd|xvd|nvme|disk|mmcblk|dm-|md|mapper/|loop|sr)")
_SYSTEM_PREFIXES = (
    "/etc/",
    "/boot/",
    "/usr/",
    "/bin/",
    "/sbin/",
    "/lib/",
    "/lib64/",
    "/lib32/",
    "/var/spool/cron",
    "/sys/",
    "/proc/sys/",
    "/proc/sysrq-trigger",
    "/root/.ssh/",
)
_HOME = re.compile(r"^(?:~[A-Za-z0-9_.-]*|\$HOME|\$\{HOME\}|/root|/home/[^/]+)(?=/|$)")


def sensitive_target(path: str) -> str | None:
    """What `path` is when writing it would give a command more power than the write (a file
    something else later runs or trusts), else None."""
    text = path.strip()
    if not text:
        return None
    home = _HOME.match(text)
    if home:
        rest = re.sub(r"^(?:\./)+", "", text[home.end() :].lstrip("/"))
        first = rest.split("/", 1)[0]
        if first in SHELL_STARTUP_FILES or any(rest == d or rest.startswith(d + "/") for d in SHELL_STARTUP_DIRS):
            return "a shell startup file"
        if first == ".ssh":
            return "ssh keys and config"
        if rest == ".config/myrm" or rest.startswith(".config/myrm/"):
            return "myrm's user config"
        if rest in (".gitconfig", ".config/git/config") or rest.startswith(".config/git/"):
            return "git's global config (git runs the programs it names)"
        if rest.startswith((".config/systemd/", ".config/autostart/", ".local/share/systemd/")):
            return "a program that runs at login"
        if rest in (".pam_environment", ".xprofile", ".xinitrc", ".xsession"):
            return "a shell startup file"
    segments = [s for s in text.split("/") if s not in ("", ".")]
    if any(s == ".git" for s in segments[:-1]) or (segments and segments[-1] == ".git"):
        return "git's hooks and config (git runs them)"
    if any(s == WORKSPACE_PROTECTED_DIRS[0] for s in segments):
        return "myrm's workspace config and store"
    if _BLOCK_DEVICE.match(text):
        return "a block device"
    if text.startswith(_SYSTEM_PREFIXES) or text in ("/etc", "/boot", "/usr", "/bin", "/sbin"):
        return "a system file"
    return None


def _operands(args: list[str]) -> list[str]:
    out, ended = [], False
    for arg in args:
        if ended or not arg.startswith("-") or arg == "-":
            out.append(arg)
        elif arg == "--":
            ended = True
    return out


def _short(args: list[str]) -> str:
    """All single-letter flags (bundles like -rf included) before `--`."""
    letters = []
    for arg in args:
        if arg == "--":
            break
        if re.fullmatch(r"-[A-Za-z]+", arg):
            letters.append(arg[1:])
    return "".join(letters)


def _long(args: list[str]) -> set[str]:
    out = set()
    for arg in args:
        if arg == "--":
            break
        if arg.startswith("--"):
            out.add(arg.split("=", 1)[0])
    return out


def writer_reason(name: str, args: list[str]) -> str | None:
    """Programs that write the files named in their arguments."""
    targets: list[str] = []
    operands = _operands(args)
    if name in ("tee", "truncate", "touch", "chmod", "chown", "chgrp", "chattr", "setfacl"):
        targets = operands
    elif name in ("rm", "unlink", "rmdir", "shred"):
        targets = operands  # deleting a protected file is as bad as rewriting it
    elif name in ("cp", "mv", "install", "ln", "rsync", "scp", "rcp", "link"):
        target_dir = next((a[len("--target-directory=") :] for a in args if a.startswith("--target-directory=")), None)
        if "-t" in args and args.index("-t") + 1 < len(args):
            target_dir = args[args.index("-t") + 1]
        targets = [target_dir] if target_dir else operands[-1:]
        if name == "mv" and targets and targets[0] == "/dev/null":
            return "moves files onto /dev/null (destroys them)"
        if name == "mv":
            targets = operands  # moving a protected folder away removes it
    elif name == "sed" and (
        "i" in _short(args) or "--in-place" in _long(args) or any(a.startswith("-i") for a in args)
    ):
        targets = operands
    elif name in ("curl", "wget"):
        for flag in ("-o", "--output", "-O", "--output-document"):
            if flag in args and args.index(flag) + 1 < len(args):
                targets.append(args[args.index(flag) + 1])
    elif name == "dd":
        targets = [a[3:] for a in args if a.startswith("of=")]
        if any(_BLOCK_DEVICE.match(t) for t in targets):
            return "dd writing to a block device"
    verb = {"rm": "deletes", "unlink": "deletes", "rmdir": "deletes", "shred": "deletes", "mv": "moves"}.get(
        name, "writes to"
    )
    for target in targets:
        what = sensitive_target(target)
        if what:
            return f"{verb} {what}"
    return None


# -- one rule per program -----------------------------------------------------------------------


def _rm(args: list[str]) -> str | None:
    if "r" in _short(args) or "R" in _short(args) or "--recursive" in _long(args):
        return "recursive delete"
    if any(op in ("/", "/*", "~", "~/", "~/*", "*", "$HOME", "$HOME/*") for op in _operands(args)):
        return "deletes everything in a folder"
    return None


_GIT_VALUE_OPTIONS = frozenset(
    {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env", "--exec-path"}
)
_GIT_RUNS_PROGRAMS = re.compile(
    r"^(?:core\.(?:hookspath|fsmonitor|sshcommand|pager|editor|askpass|gitproxy)|"
    r"alias\..*|diff\..*\.textconv|filter\..*\.(?:clean|smudge|process)|"
    r"credential\.helper|sequence\.editor|uploadpack\.packobjectshook)$"
)


def _git(args: list[str]) -> str | None:
    index = 0
    while index < len(args) and args[index].startswith("-"):
        value = args[index + 1] if index + 1 < len(args) else ""
        if args[index] in ("-c", "--config-env") and _GIT_RUNS_PROGRAMS.match(value.split("=", 1)[0].lower()):
            return "makes git run a program"
        index += 2 if args[index] in _GIT_VALUE_OPTIONS else 1
    if index >= len(args):
        return None
    sub, rest = args[index], args[index + 1 :]
    short, long_ = _short(rest), _long(rest)
    operands = _operands(rest)
    if sub == "push":
        if (
            "f" in short
            or "d" in short
            or long_ & {"--force", "--force-with-lease", "--mirror", "--delete", "--prune"}
            or any(op.startswith(("+", ":")) for op in operands[1:])
        ):
            return "force push (overwrites or deletes remote branches)"
    elif sub == "reset" and "--hard" in long_:
        return "git reset --hard (drops uncommitted changes)"
    elif sub == "clean" and ("f" in short or "--force" in long_) and not ("n" in short or "--dry-run" in long_):
        return "git clean -f (deletes untracked files)"
    elif sub in ("checkout", "restore", "switch"):
        staged_only = (
            sub == "restore" and ("S" in short or "--staged" in long_) and not ("W" in short or "--worktree" in long_)
        )
        if not staged_only and (
            ("f" in short and sub != "restore")
            or "--force" in long_
            or "--discard-changes" in long_
            or any(op in (".", ":/", "*", ":/*") for op in operands)
        ):
            return f"git {sub} discards uncommitted changes"
    elif sub == "branch" and (
        "D" in short or (("d" in short or "--delete" in long_) and ("f" in short or "--force" in long_))
    ):
        return "deletes a branch whatever its merge state"
    elif sub == "stash" and operands[:1] in (["clear"], ["drop"]):
        return "drops stashed changes"
    elif sub == "stash" and ("u" in short or "a" in short or long_ & {"--include-untracked", "--all"}):
        return "git stash -u removes untracked files from the work tree"
    elif sub == "rm" and ("r" in short or "--recursive" in long_) and "--cached" not in long_:
        return "git rm -r (recursive delete)"
    elif sub == "reflog" and operands[:1] in (["expire"], ["delete"]):
        return "rewrites the reflog (lost commits become unrecoverable)"
    elif sub in ("filter-branch", "filter-repo"):
        return "rewrites history"
    elif sub == "gc" and any(a in ("--prune=now", "--prune=all") for a in rest):
        return "prunes unreachable commits now"
    elif sub == "update-ref" and "d" in short:
        return "deletes a ref"
    elif sub == "config" and any(_GIT_RUNS_PROGRAMS.match(op.lower()) for op in operands):
        return "makes git run a program"
    return None


def _mv(args: list[str]) -> str | None:
    """Moving something out of the current tree (an absolute path, the home folder, `..`): in the
    sandbox only its private /tmp is writable outside the workspace, and that is gone when the
    call ends, so `mv data /tmp/x` deletes `data` as surely as `rm -r` does."""
    target_dir = next((a[len("--target-directory=") :] for a in args if a.startswith("--target-directory=")), None)
    if "-t" in args and args.index("-t") + 1 < len(args):
        target_dir = args[args.index("-t") + 1]
    operands = _operands(args)
    destination = target_dir if target_dir is not None else (operands[-1] if len(operands) > 1 else None)
    if destination is None:
        return None
    if destination.startswith(("/", "~", "$HOME", "${HOME}")) or destination.split("/", 1)[0] == "..":
        return "moves files out of the workspace"
    return None


def _perms(args: list[str]) -> str | None:
    if "R" in _short(args) or "--recursive" in _long(args):
        return "recursive permission change"
    return None


def _kill(args: list[str]) -> str | None:
    signal_seen = False
    operands_only = False
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if not operands_only and arg == "--":
            operands_only = True
            continue
        if not operands_only and arg in ("-s", "-n"):
            signal_seen, skip = True, True
            continue
        if not operands_only and arg.startswith("-") and not signal_seen and arg not in ("-l", "-L"):
            signal_seen = True
            continue
        if arg in ("-1", "1"):
            return "kills every process"
    return None


def _crontab(args: list[str]) -> str | None:
    if "r" in _short(args):
        return "removes every cron job"
    if _operands(args) and "l" not in _short(args):
        return "installs cron jobs (they run later, outside myrm)"
    return None


_SQL_DESTRUCTIVE = re.compile(
    r"\b(?:drop\s+(?:database|schema|table)|truncate\s+table|flushall|flushdb|"
    r"dropdatabase)\b",
    re.IGNORECASE,
)


def _database(args: list[str]) -> str | None:
    if _SQL_DESTRUCTIVE.search(" ".join(args)):
        return "drops database data"
    return None


def _words_rule(required: tuple[str, ...], reason: str) -> Callable[[list[str]], str | None]:
    """A rule for `tool ... word1 ... word2` (all required words present, any order)."""

    def rule(args: list[str]) -> str | None:
        return reason if all(word in args for word in required) else None

    return rule


def _any_rule(*rules: Callable[[list[str]], str | None]) -> Callable[[list[str]], str | None]:
    def rule(args: list[str]) -> str | None:
        return next((r for r in (rule(args) for rule in rules) if r), None)

    return rule


def _aws(args: list[str]) -> str | None:
    if "s3" in args and ("rb" in args or ("rm" in args and "--recursive" in args)):
        return "deletes cloud storage"
    if any(a.startswith(("delete-", "terminate-")) for a in args):
        return "deletes cloud resources"
    return None


def _container(args: list[str]) -> str | None:
    """`docker run --privileged` or with the host's root mounted is root on the host."""
    operands = _operands(args)
    if operands[:1] not in (["run"], ["create"], ["exec"]):
        return _any_rule(
            _words_rule(("system", "prune"), "deletes container data"),
            _words_rule(("volume", "rm"), "deletes container data"),
            _words_rule(("volume", "prune"), "deletes container data"),
        )(args)
    for index, arg in enumerate(args):
        value = args[index + 1] if index + 1 < len(args) else ""
        if arg == "--privileged" or arg in ("--pid=host", "--net=host", "--userns=host"):
            return "runs a privileged container (root on the host)"
        mount = (
            value
            if arg in ("-v", "--volume", "--mount")
            else (arg.split("=", 1)[1] if arg.startswith(("--volume=", "--mount=")) else "")
        )
        if mount.split(":", 1)[0] == "/" or "source=/," in mount + "," or mount.endswith("source=/"):
            return "mounts the host's root into a container"
        if mount.split(":", 1)[0].endswith("docker.sock"):
            return "gives a container the docker socket (root on the host)"
    return None


def _publish(args: list[str]) -> str | None:
    operands = _operands(args)
    if operands[:1] in (["publish"], ["unpublish"]):
        return f"{operands[0]}es a package (cannot be taken back)"
    return None


def _always(reason: str) -> Callable[[list[str]], str | None]:
    return lambda args: reason


def _first_operand(words: dict[str, str]) -> Callable[[list[str]], str | None]:
    def rule(args: list[str]) -> str | None:
        operands = _operands(args)
        return words.get(operands[0]) if operands else None

    return rule


_POWER = {
    w: "shuts the machine down"
    for w in ("poweroff", "reboot", "halt", "kexec", "suspend", "hibernate", "rescue", "emergency")
}

RULES: dict[str, Callable[[list[str]], str | None]] = {
    "rm": _rm,
    "git": _git,
    "chmod": _perms,
    "chown": _perms,
    "chgrp": _perms,
    "shred": _always("overwrites files irrecoverably"),
    "wipefs": _always("erases a disk"),
    "blkdiscard": _always("erases a disk"),
    "fdisk": _always("repartitions a disk"),
    "sfdisk": _always("repartitions a disk"),
    "cfdisk": _always("repartitions a disk"),
    "parted": _always("repartitions a disk"),
    "gdisk": _always("repartitions a disk"),
    "sgdisk": _always("repartitions a disk"),
    "mkswap": _always("make a filesystem"),
    "shutdown": _always("shuts the machine down"),
    "reboot": _always("shuts the machine down"),
    "poweroff": _always("shuts the machine down"),
    "halt": _always("shuts the machine down"),
    "init": _first_operand({"0": "shuts the machine down", "6": "shuts the machine down"}),
    "telinit": _first_operand({"0": "shuts the machine down", "6": "shuts the machine down"}),
    "systemctl": _first_operand(_POWER),
    "loginctl": _first_operand(_POWER),
    "kill": _kill,
    "killall5": _always("kills every process"),
    "crontab": _crontab,
    "rsync": lambda args: (
        "rsync deletes files at the destination"
        if any(a.startswith(("--delete", "--remove-source-files")) for a in args)
        else None
    ),
    "psql": _database,
    "mysql": _database,
    "mariadb": _database,
    "sqlite3": _database,
    "duckdb": _database,
    "mongo": _database,
    "mongosh": _database,
    "redis-cli": _database,
    "dropdb": _always("drops a database"),
    "terraform": _any_rule(
        _words_rule(("destroy",), "destroys infrastructure"),
        _words_rule(("apply", "-destroy"), "destroys infrastructure"),
    ),
    "tofu": _words_rule(("destroy",), "destroys infrastructure"),
    "kubectl": _words_rule(("delete",), "deletes cluster resources"),
    "helm": _any_rule(
        _words_rule(("uninstall",), "deletes cluster resources"), _words_rule(("delete",), "deletes cluster resources")
    ),
    "docker": _container,
    "rimraf": _always("recursive delete"),
    "tar": lambda args: "deletes the files it archives" if "--remove-files" in _long(args) else None,
    "bsdtar": lambda args: "deletes the files it archives" if "--remove-files" in _long(args) else None,
    "zip": lambda args: "deletes the files it archives" if "m" in _short(args) or "--move" in _long(args) else None,
    "7z": lambda args: "deletes the files it archives" if "-sdel" in args else None,
    "mv": _mv,
    "podman": _any_rule(
        _words_rule(("system", "prune"), "deletes container data"),
        _words_rule(("system", "reset"), "deletes container data"),
        _words_rule(("volume", "rm"), "deletes container data"),
    ),
    "aws": _aws,
    "gcloud": _words_rule(("delete",), "deletes cloud resources"),
    "az": _words_rule(("delete",), "deletes cloud resources"),
    "gsutil": _any_rule(
        _words_rule(("rb",), "deletes cloud storage"),
        lambda args: "deletes cloud storage" if "rm" in args and "r" in _short(args) else None,
    ),
    "gh": _any_rule(
        _words_rule(("repo", "delete"), "deletes on GitHub"), _words_rule(("release", "delete"), "deletes on GitHub")
    ),
    "npm": _publish,
    "pnpm": _publish,
    "yarn": _publish,
    "cargo": _publish,
    "poetry": _publish,
    "twine": _first_operand({"upload": "publishes a package (cannot be taken back)"}),
    "gem": _first_operand({"push": "publishes a package (cannot be taken back)"}),
}


def program_reason(name: str, args: list[str]) -> str | None:
    rule = RULES.get(name)
    if rule is None and re.fullmatch(r"mkfs(?:\.\w+)?", name):
        return "make a filesystem"
    return rule(args) if rule else None
