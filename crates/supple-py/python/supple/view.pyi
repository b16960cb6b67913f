import os
import subprocess
from typing import Optional, Union

from . import World

_Path = Union[str, "os.PathLike[str]"]

class Viewer:
    process: subprocess.Popen[str]
    url: str
    def __init__(
        self, process: subprocess.Popen[str], url: str, folder: Optional[str] = ...
    ) -> None: ...
    def stop(self, timeout: float = ...) -> Optional[int]: ...
    def __enter__(self) -> "Viewer": ...
    def __exit__(self, *exc: object) -> None: ...

def view(
    target: Union[_Path, World],
    *,
    open_browser: bool = ...,
    port: int = ...,
    www: Optional[_Path] = ...,
    program: Optional[_Path] = ...,
    timeout: float = ...,
) -> Viewer: ...
