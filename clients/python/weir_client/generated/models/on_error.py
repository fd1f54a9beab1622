from enum import StrEnum

class OnError(StrEnum):
    DELIVER = "deliver"
    DROP = "drop"

    def __str__(self) -> str:
        return str(self.value)
