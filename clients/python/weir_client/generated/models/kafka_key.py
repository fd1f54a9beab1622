from enum import StrEnum

class KafkaKey(StrEnum):
    EVENT = "event"
    NONE = "none"
    SUBJECT = "subject"

    def __str__(self) -> str:
        return str(self.value)
