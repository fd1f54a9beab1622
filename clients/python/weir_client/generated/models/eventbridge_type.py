from enum import StrEnum

class EventbridgeType(StrEnum):
    EVENTBRIDGE = "eventbridge"

    def __str__(self) -> str:
        return str(self.value)
