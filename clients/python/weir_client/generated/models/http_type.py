from enum import StrEnum

class HttpType(StrEnum):
    HTTP = "http"

    def __str__(self) -> str:
        return str(self.value)
