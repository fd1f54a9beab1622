from enum import StrEnum

class Ordering(StrEnum):
    NONE = "none"
    SUBJECT = "subject"

    def __str__(self) -> str:
        return str(self.value)
