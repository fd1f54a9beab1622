from enum import StrEnum

class EndpointState(StrEnum):
    HEALTHY = "healthy"
    PAUSED = "paused"
    PROBING = "probing"

    def __str__(self) -> str:
        return str(self.value)
