from enum import StrEnum

class ReplayStatus(StrEnum):
    COMPLETED = "completed"
    NONE = "none"
    RUNNING = "running"
    STOPPED = "stopped"

    def __str__(self) -> str:
        return str(self.value)
