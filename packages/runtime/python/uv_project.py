"""Installs a uv project's locked dependencies into the Python environment that runs this script (graphx.json
"source": {"kind": "uv"}). One implementation for both runners: the process runner's BUILD step runs it on the host,
the container runner's Python layer in the image build (with only pyproject.toml files and uv.lock in its context).

0. The lock's local packages (workspace members, path sources) must be inside the project and declare their
   dependencies statically in pyproject.toml's [project]: uv would otherwise build them to learn their dependencies,
   running the repository's setup.py or build backend in the build (and the container layer, which holds only the
   manifests, could not). The build fails naming the package and its folder.
1. `uv export --locked`: the lock as requirement lines with their hashes; a uv.lock out of date with pyproject.toml
   fails here with uv's own message.
2. The lock may not pin a package the server relies on to another version than the server's pin (the executor's
   requirements.txt), nor name an Elastic-licensed server package: the build fails naming the package.
3. `uv pip install`: the server's pins and the locked packages (their hashes verified), the pins as constraints.

The workspace members (the deployed package and the members it depends on) are not installed: their code comes
with each revision and is put in front of site-packages when the executor starts; their folders, relative to the
project root, are written to `graphx-uv-members.json` in the environment.

Usage: python uv_project.py --uv UV --root ROOT --pins PINS [--config-dir DIR] [--package NAME] [--check-only]
"""

import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import tomllib

REFUSED = re.compile(r"^(langgraph-api|langgraph-runtime[\w.-]*|graphx-executor)$")
MEMBERS_FILE = "graphx-uv-members.json"
# Fields of [project] uv can only learn by building the package when they are dynamic (a dynamic version it can skip).
BUILT_FOR_METADATA = {"dependencies", "optional-dependencies"}


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def read_pins(path: str) -> dict[str, str]:
    pins = {}
    with open(path) as file:
        for line in file:
            match = re.match(r"^([A-Za-z0-9][\w.-]*)==(\S+)", line.strip())
            if match:
                pins[normalise(match.group(1))] = match.group(2)
    return pins


def inferred_package(root: str, config_dir: str | None) -> str | None:
    """As langgraph-cli infers it: the workspace member holding graphx.json (the deepest), else the only member;
    None: the root project."""
    with open(os.path.join(root, "pyproject.toml"), "rb") as file:
        members = tomllib.load(file).get("tool", {}).get("uv", {}).get("workspace", {}).get("members", [])
    found = {}
    for pattern in members if isinstance(members, list) else []:
        for folder in glob.glob(os.path.join(root, str(pattern))):
            manifest = os.path.join(folder, "pyproject.toml")
            if os.path.realpath(folder) != root and os.path.isfile(manifest):
                with open(manifest, "rb") as file:
                    found[os.path.realpath(folder)] = tomllib.load(file).get("project", {}).get("name")
    here = os.path.realpath(config_dir or root)
    holding = [folder for folder in found if here == folder or here.startswith(folder + os.sep)]
    if holding:
        return found[max(holding, key=len)]
    return next(iter(found.values())) if len(found) == 1 else None


def logical_lines(text: str) -> list[str]:
    """Requirement lines with their `\\` continuations joined; comments and blank lines dropped."""
    lines, current = [], ""
    for raw in text.splitlines():
        current += raw.rstrip("\\").strip() + " "
        if raw.rstrip().endswith("\\"):
            continue
        if current.strip() and not current.lstrip().startswith("#"):
            lines.append(current.strip())
        current = ""
    return lines


def split_export(lines: list[str], root: str) -> tuple[list[str], list[str]]:
    """(requirements for the index, workspace folders relative to the root)."""
    requirements, members = [], []
    for line in lines:
        local = line[3:].strip() if line.startswith("-e ") else line
        if local.startswith((".", "/")):
            folder = os.path.realpath(os.path.join(root, local.split()[0]))
            if not inside(root, folder):
                fail(f'uv.lock installs {local.split()[0]}, which is outside the uv project at "source.root".')
            members.append(os.path.relpath(folder, root))
        else:
            requirements.append(line)
    return requirements, members


def inside(root: str, folder: str) -> bool:
    return folder == root or folder.startswith(root + os.sep)


def local_problem(root: str, name: str, where: str) -> str | None:
    """Why the lock's local package `name` at `where` (relative to the root) cannot be exported without running its
    code, or None."""
    folder = os.path.realpath(os.path.join(root, where))
    if not inside(root, folder):
        return f"uv.lock installs {where}, which is outside the uv project at \"source.root\"."
    manifest = os.path.join(folder, "pyproject.toml")
    project = None
    if os.path.isfile(manifest):
        try:
            with open(manifest, "rb") as file:
                project = tomllib.load(file).get("project")
        except tomllib.TOMLDecodeError:
            return None  # uv's own message
    declared = os.path.relpath(manifest, root)
    if not isinstance(project, dict):
        found = f"{declared} has no [project] table" if os.path.isfile(manifest) else f"{declared} does not exist"
    else:
        dynamic = sorted(BUILT_FOR_METADATA & set(project.get("dynamic", [])))
        if not dynamic:
            return None
        found = f"{declared} makes {' and '.join(dynamic)} dynamic"
    return (
        f"uv.lock's local package {name} ({where}) has no static dependencies: {found}. uv would build it to learn "
        "them, running the repository's setup.py or build backend, which builds never do; declare name, version and "
        "dependencies in its pyproject.toml [project] table and run `uv lock`."
    )


def local_problems(root: str) -> list[str]:
    """One sentence per local package of uv.lock (a workspace member, a path source) `uv export` would have to build."""
    try:
        with open(os.path.join(root, "uv.lock"), "rb") as file:
            packages = tomllib.load(file).get("package", [])
    except (OSError, tomllib.TOMLDecodeError):
        return []  # uv's own message
    problems = []
    for package in packages if isinstance(packages, list) else []:
        source = package.get("source", {}) if isinstance(package, dict) else {}
        where = source.get("directory", source.get("editable")) if isinstance(source, dict) else None
        if isinstance(where, str):
            problem = local_problem(root, str(package.get("name")), where)
            if problem:
                problems.append(problem)
    return problems


def reserved(requirements: list[str], pins: dict[str, str]) -> list[str]:
    """One sentence per locked package the server's pins refuse."""
    problems = []
    for line in requirements:
        match = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(==\s*([^\s;\\]+)|@\s*\S+)?", line)
        if not match:
            continue
        name = normalise(match.group(1))
        version = match.group(4)
        if REFUSED.match(name):
            problems.append(f"uv.lock installs {name}, which is reserved: the server's own packages are provided.")
        elif name in pins and version != pins[name]:
            locked = version or line.split(";")[0].split(" --hash")[0].strip()
            problems.append(
                f"uv.lock pins {name} {locked}, which is reserved: the server relies on {name} {pins[name]}, "
                f"which it may not replace (lock {name}=={pins[name]})."
            )
    return problems


def fail(message: str) -> None:
    print(f'graphx.json "source": {message}', file=sys.stderr)
    sys.exit(1)


def report(problems: list[str]) -> None:
    """Fails with the first problem (the build's message), the others in the log before it."""
    for problem in problems[1:]:
        print(f'graphx.json "source": {problem}', file=sys.stderr)
    if problems:
        fail(problems[0])


def run(command: list[str], cwd: str) -> None:
    print("$ " + " ".join(command), flush=True)
    code = subprocess.call(command, cwd=cwd)
    if code != 0:
        sys.exit(code)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--uv", required=True)
    parser.add_argument("--root", required=True)
    parser.add_argument("--pins", required=True)
    parser.add_argument("--config-dir")
    parser.add_argument("--package")
    parser.add_argument("--check-only", action="store_true")
    options = parser.parse_args()
    root = os.path.realpath(options.root)
    package = options.package or inferred_package(root, options.config_dir)
    report(local_problems(root))
    with tempfile.TemporaryDirectory(prefix="graphx-uv-") as work:
        exported = os.path.join(work, "locked.txt")
        command = [options.uv, "export", "--quiet", "--locked", "--no-dev", "--format", "requirements-txt", "--no-header"]
        command += ["--no-annotate", "--python", sys.executable, "-o", exported]
        run(command + (["--package", package] if package else []), root)
        with open(exported) as file:
            requirements, members = split_export(logical_lines(file.read()), root)
        report(reserved(requirements, read_pins(options.pins)))
        print(f"uv.lock: {len(requirements)} locked packages" + (f" for {package}" if package else ""), flush=True)
        if options.check_only:
            return
        locked = os.path.join(work, "locked-index.txt")
        with open(locked, "w") as file:
            file.write("\n".join(requirements) + "\n")
        install = [options.uv, "pip", "install", "--python", sys.executable, "-r", options.pins, "-c", options.pins]
        run(install + ["-r", locked], root)
    with open(os.path.join(sys.prefix, MEMBERS_FILE), "w") as file:
        json.dump(sorted(set(members)), file)


if __name__ == "__main__":
    main()
