from enum import StrEnum

class NatsType(StrEnum):
    NATS = "nats"

    def __str__(self) -> str:
        return str(self.value)
